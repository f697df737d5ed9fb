// The base64 form keys and signatures travel and rest in. Apart from keys.ts so
// that what only encodes (the envelope, the mesh's home) does not load @noble.
export const b64 = (bytes: Uint8Array): string => Buffer.from(bytes).toString('base64');
