// How a bundle program ends: exit 0 when MAIN resolves; else its message on
// stderr (the stack too with MESH_DEBUG set) and exit 1.
export function runMain(main: () => Promise<void>): void {
  main().then(
    () => process.exit(0),
    (err) => {
      process.stderr.write(`bundle: ${(err as Error).message}\n`);
      if (process.env.MESH_DEBUG) console.error(err);
      process.exit(1);
    },
  );
}
