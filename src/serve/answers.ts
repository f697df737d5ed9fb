// P2: serve's answers to nodes (enrol, recover, rekey, an agent package's
// chunks) go on a connection of their own. A broker short of memory or disk
// holds every connection that publishes and stops reading from it, its acks
// included: were the answers on the consuming connection, one answer during a
// resource alarm would leave serve unable to settle anything, the control
// queue could not drain, and the alarm a flood raised would never clear.
//
// While the broker holds publishers an answer is not attempted: the ask is
// handed back (Held), not counted as a try, so its sender's later messages go
// on being settled. An answer the broker has not confirmed in ANSWER_WAIT_MS
// (published just as the hold began) is handed back the same way; if it was
// delivered after all, the node is answered twice, which a host takes as the
// same answer delivered again (host/agent.ts, D2 'same').
import type { ConfirmChannel } from 'amqplib';
import type { Connection } from '../broker/connect.js';
import { toNode, type NodePublish } from '../broker/publish.js';
import { followHold } from '../broker/hold.js';

/** How long an answer waits for the broker's confirm before its ask is handed back. */
export const ANSWER_WAIT_MS = 15_000;

/** The broker holds publishers (a resource alarm): the ask goes back to the queue, no try counted. */
export class Held extends Error {}

/** Publish an answer to a node's queue (or the direct reply-to it asked on). */
export type Answer = (queue: string, body: Buffer, props?: NodePublish) => Promise<void>;

/** Answers on CONN, which serve uses for nothing else; LOG says when the broker holds and lets go of them. */
export async function answersOn(conn: Connection, log: (line: string) => void): Promise<Answer> {
  const ch: ConfirmChannel = await conn.createConfirmChannel();
  const hold = followHold(conn, "serve's answers", 'asks that need one are handed back until it lets go', (line) =>
    log(`serve: ${line}`),
  );
  return async (queue, body, props) => {
    if (hold.reason)
      throw new Held(`the broker holds publishers (${hold.reason}); ${queue} is answered once it lets go`);
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Held(`the broker did not confirm the answer to ${queue} in ${ANSWER_WAIT_MS / 1000}s`)),
        ANSWER_WAIT_MS,
      );
    });
    try {
      await Promise.race([toNode(ch, queue, body, props), late]);
    } finally {
      clearTimeout(timer);
    }
  };
}
