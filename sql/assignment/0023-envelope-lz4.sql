-- Each declaration's envelope compressed with lz4 rather than pglz (new rows;
-- the rows already stored stay as they are, both read the same). Why: an
-- envelope of ~2.7 kB is over the TOAST threshold, so every one recorded is
-- compressed in the declaring transaction and decompressed by each drain:
-- recording bench 3's 10,000 (27 MB) and committing took 1.09-1.32 s with
-- pglz, 0.96-1.01 s with lz4, the same envelopes in one run; stored size about
-- the same (PostgreSQL 15 as Debian builds it, --with-lz4).
alter table assignment.declaration alter column envelope set compression lz4;
