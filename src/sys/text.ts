// Text another party wrote (a node's report: refusal reasons, drift targets,
// errors), made safe to print anywhere: every control character, and the
// characters that reorder or break a line on a terminal or a page, is written
// as its \uXXXX escape. Applied once, where such text enters (src/wire), so
// the store, `mesh log`, serve's journal and the console all hold and show
// the same harmless text, and no new printer has to remember it.
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

export function plainText(s: string): string {
  return s.replace(UNSAFE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
