// The operator's log: one line per event that needs a person, on stderr.
// Heard is silent: a log where the ordinary case is loud is a log nobody reads.
export function log(line: string): void {
  process.stderr.write(`${new Date().toISOString()} ${line}\n`);
}
