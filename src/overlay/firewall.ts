// `mesh firewall ssh-port N`: the one port every node's firewall keeps open
// for an operator over ssh (X1). What each node admits is assignment's view
// (src/assignment/firewall.ts).
import { withStore } from '../store/with_store.js';

export function setSshPort(port: number): Promise<{ sshPort: number }> {
  return withStore('overlay', async (sql) => {
    const [r] = await sql`select overlay.set_ssh_port(${port}::int) as p`;
    return { sshPort: r!.p as number };
  });
}
