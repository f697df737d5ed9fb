// The sign-in page. Opened from a link, it shows one button that signs in:
// the link's secret goes in a POST, so whatever fetches the link first (a
// chat's preview, a mail scanner) spends nothing.
'use strict';

document.addEventListener('DOMContentLoaded', () => {
  const token = new URLSearchParams(location.search).get('token');
  if (!token) return;
  const form = document.getElementById('signin-form');
  form.elements.token.value = token;
  form.hidden = false;
});
