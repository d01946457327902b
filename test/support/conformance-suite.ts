import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';

/** The official MCP conformance suite's command-line entry. */
export const SUITE = createRequire(import.meta.url).resolve('@modelcontextprotocol/conformance/dist/index.js');

/**
 * The Node that runs the suite: it needs Node 22 or later (it uses fs.globSync); on an older Node
 * it is the Node 22 that scripts/run-tests.ts installs for the tests and names in TESTS_NODE_22.
 * Throws with what to do when there is none.
 */
export function suiteNode(): string {
  const node = Number(process.versions.node.split('.')[0]) >= 22 ? process.execPath : process.env.TESTS_NODE_22;
  if (!node || !existsSync(node)) {
    throw new Error(
      `The conformance suite needs Node 22 (${node ?? 'TESTS_NODE_22 is not set'}): run this test with bash scripts/test.sh, which installs it and names it.`,
    );
  }
  return node;
}
