import { spawn } from 'node:child_process';
import { readFile, readdir } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';

const POLL_MS = 50;
// After SIGKILL the kernel needs only moments; this bounds the wait if something is stuck in the kernel.
const AFTER_KILL_WAIT_MS = 2000;

/**
 * Ends every process of the group led by `pgid` (a child spawned detached, so it leads its own
 * group): SIGTERM first so they can clean up, SIGKILL for whatever is left after `graceMs`.
 * Resolves once no live process remains in the group, so nothing it started is left running.
 */
export async function terminateProcessGroup(pgid: number, graceMs: number): Promise<void> {
  if (process.platform === 'win32') return killWindowsTree(pgid);
  if (!signalGroup(pgid, 'SIGTERM')) return;
  if (await waitUntilGone(pgid, graceMs)) return;
  signalGroup(pgid, 'SIGKILL');
  await waitUntilGone(pgid, AFTER_KILL_WAIT_MS);
}

/** Whether any process of the group is still running (zombies, already dead, do not count). */
export async function processGroupAlive(pgid: number): Promise<boolean> {
  try {
    process.kill(-pgid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
  // Under an init that never reaps orphans (a bare container's PID 1), dead grandchildren stay
  // zombies forever and still answer kill(0); only /proc can tell them from live ones.
  if (process.platform !== 'linux') return true;
  return (await liveMembersOnLinux(pgid)) > 0;
}

function signalGroup(pgid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch {
    return false; // ESRCH: the group is already gone
  }
}

async function waitUntilGone(pgid: number, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  for (;;) {
    if (!(await processGroupAlive(pgid))) return true;
    if (Date.now() >= deadline) return false;
    await sleep(POLL_MS);
  }
}

async function liveMembersOnLinux(pgid: number): Promise<number> {
  let count = 0;
  for (const entry of await readdir('/proc').catch(() => [] as string[])) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await readFile(`/proc/${entry}/stat`, 'utf8').catch(() => '');
    // Fields after the parenthesised command name: state, ppid, pgrp, ...
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(fields[2]) === pgid && fields[0] !== 'Z' && fields[0] !== 'X') count += 1;
  }
  return count;
}

function killWindowsTree(pid: number): Promise<void> {
  // Windows has no process groups to signal; taskkill /T ends the process and its descendants.
  return new Promise((resolve) => {
    const killer = spawn('taskkill', ['/pid', String(pid), '/T', '/F'], { stdio: 'ignore', windowsHide: true });
    killer.once('error', () => resolve());
    killer.once('exit', () => resolve());
  });
}
