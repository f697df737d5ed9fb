// `mesh agent upgrade --to VERSION`: which mesh-host every node (or one node)
// must run (V2). The rule and its refusals are in SQL
// (assignment.set_agent_target); the change reaches the nodes as any change
// does, at once or, under an open rollout, wave by wave.
import { withStore } from '../store/with_store.js';

export function upgradeAgents(version: string, node?: string) {
  return withStore('assignment', async (sql) => {
    await sql`select assignment.set_agent_target(${version}, ${node ?? null})`;
    return { version, nodes: node ?? 'every node' };
  });
}

/** Each node with a declared agent version, and the version its reports name. */
export function agentTargets() {
  return withStore(
    'assignment',
    (sql) =>
      sql`select t.node, t.version as declared, v.agent_version as reported
          from assignment.agent_targets() t left join inventory.node_agent_version v on v.name = t.node order by t.node`,
  );
}
