// Commands return data; this prints it: a table for a person, --json for a program.
export function table(rows: Record<string, unknown>[], columns?: string[]): string {
  if (rows.length === 0) return '(none)';
  const cols = columns ?? Object.keys(rows[0]!);
  const cell = (v: unknown) => (v === null || v === undefined ? '-' : v instanceof Date ? v.toISOString() : String(v));
  const widths = cols.map((c) => Math.max(c.length, ...rows.map((r) => cell(r[c]).length)));
  const line = (vals: string[]) =>
    vals
      .map((v, i) => v.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  return [line(cols.map((c) => c.toUpperCase())), ...rows.map((r) => line(cols.map((c) => cell(r[c]))))].join('\n');
}

export function emit(data: unknown, opts: { json?: boolean }, human: (d: any) => string): void {
  if (opts.json)
    process.stdout.write(JSON.stringify(data, (_k, v) => (typeof v === 'bigint' ? Number(v) : v), 2) + '\n');
  else process.stdout.write(human(data) + '\n');
}
