// Our SQL raises its own codes (MSH..); a person sees the message and its hint.
export function storeError(err: unknown): Error {
  const e = err as { code?: string; message?: string; hint?: string };
  if (e.code && /^MSH/.test(e.code)) {
    return new Error(`${e.message}${e.hint ? `: ${e.hint}` : ''}.`, { cause: err });
  }
  return err as Error;
}
