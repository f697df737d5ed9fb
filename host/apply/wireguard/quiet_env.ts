// wireguard-go keeps stdout/stderr open when LOG_LEVEL is set, and a
// daemonised child holding our pipes would make the runner wait for ever:
// `wg-quick up` (which may start wireguard-go) runs without it.
export function quietEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  delete env.LOG_LEVEL;
  return env;
}
