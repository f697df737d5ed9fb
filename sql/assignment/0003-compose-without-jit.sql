-- compose's plan reaches across every context's node_resources view; PostgreSQL's
-- estimate of it is far over jit_above_cost, so every call spent seconds
-- JIT-compiling a query that runs in under a millisecond (BENCHMARKS.md, fan-out).
alter function assignment.compose(text) set jit = off;
