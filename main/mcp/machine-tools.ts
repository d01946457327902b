import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import * as z from 'zod';
import {
  BASH_DEFAULT_TIMEOUT_SECONDS,
  BASH_OUTPUT_HEAD_BYTES,
  BASH_SAVED_OUTPUT_MAX_BYTES,
  BASH_OUTPUT_TAIL_BYTES,
  type BashResult,
  type CapturedOutput,
  type CommandRunner,
} from '../machine/command-runner.js';
import { DIFF_MAX_LINES } from '../machine/diff.js';
import { editFile } from '../machine/edit.js';
import { MachineError } from '../machine/errors.js';
import type { FileRules } from '../machine/file-target.js';
import { READ_DEFAULT_LINE_LIMIT, READ_MAX_BINARY_BYTES, READ_MAX_TEXT_BYTES, readFile, type ReadResult } from '../machine/read.js';
import { listSkills, loadSkill, skillCatalogText, type LoadedSkill } from '../machine/skills.js';
import { writeFile } from '../machine/write.js';
import type { CommandPolicy } from './place-policy.js';
import { ALWAYS_LOAD, toolShape, withHandler, type SessionTool, type ToolExtra } from './session-tool.js';

export interface MachineToolDeps {
  skillsDir: string;
  commands: CommandRunner;
  /**
   * The place policy of call `call` (its `extra`): its sandbox, none under `machine`, and the check a
   * command makes once registered; throws (a MachineError the agent reads) when the policy needs a
   * sandbox this machine cannot make.
   */
  policy?: (call: ToolExtra) => Promise<CommandPolicy>;
  /** The session's place root (`""`: This machine): its commands' outputs are saved in its own folder. */
  place?: string;
}

const KiB = 1024;
const GiB = 1024 ** 3;

/** The machine tools' shapes, built once per bash timeout limit (one in practice: the host's setting). */
const shapesByMax = new Map<number, ReturnType<typeof machineToolShapes>>();

function machineToolShapes(max: number) {
  const defaultTimeout = Math.min(BASH_DEFAULT_TIMEOUT_SECONDS, max);
  return {
    read: toolShape({
      name: 'read',
      title: 'Read a file',
      description:
        `Read a file on this machine. path is absolute or relative to the server's working directory (resource://cwd). ` +
        `Text comes back exactly as in the file; offset/limit count lines (offset 1-based, default the first ${READ_DEFAULT_LINE_LIMIT} lines), ` +
        `and a negative offset counts from the end: offset -10 returns the last 10 lines (like tail -n 10), found by reading back from the end ` +
        `of the file, so it is fast on files of any size (line numbers are given when known). ` +
        `at most ${READ_MAX_TEXT_BYTES / KiB} KiB per call, and a note after the text says which lines were returned and the offset to continue from. ` +
        `A read stops at its last line: the note gives the file's line count when the read reached the end of the file, else says that more follow ` +
        `(total: true counts them all, which reads the whole file). ` +
        `A file that is not text (NUL bytes or invalid UTF-8), or any file read with encoding "base64", comes back as base64 with offset/limit in bytes ` +
        `(offset 0-based), at most ${READ_MAX_BINARY_BYTES / KiB} KiB of the file per call; png, jpeg, gif and webp images that fit come back as images. ` +
        `To list a directory or search files, use bash (ls, find, grep).`,
      input: {
        path: z.string().min(1).describe('File path, absolute or relative to the working directory.'),
        offset: z
          .number()
          .int()
          .optional()
          .describe(
            'Text: first line to return, 1-based; negative counts from the end (-10: the last 10 lines). Base64: first byte, 0-based.',
          ),
        limit: z
          .number()
          .int()
          .min(1)
          .optional()
          .describe(`Text: number of lines (default ${READ_DEFAULT_LINE_LIMIT}). Base64: number of bytes.`),
        encoding: z.enum(['text', 'base64']).optional().describe('Force text or base64; by default text unless the file is binary.'),
        total: z.boolean().optional().describe("Text: also count the file's lines, to give the total (reads the whole file)."),
      },
      _meta: ALWAYS_LOAD,
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    }),
    write: toolShape({
      name: 'write',
      title: 'Write a file',
      description:
        'Create a file or replace its whole content. Missing parent folders are created; the file is replaced atomically ' +
        '(a reader never sees half of it) and an existing file keeps its permissions; writing through a symbolic link updates its target. ' +
        'For binary files pass the bytes as base64 with encoding "base64". To change part of a text file, use edit.',
      input: {
        path: z.string().min(1).describe('File path, absolute or relative to the working directory.'),
        content: z.string().describe('The new content: text, or base64 when encoding is "base64".'),
        encoding: z.enum(['text', 'base64']).optional().describe('"base64" when content is base64-encoded bytes; default "text" (UTF-8).'),
      },
      _meta: ALWAYS_LOAD,
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    }),
    edit: toolShape({
      name: 'edit',
      title: 'Edit a text file',
      description:
        'Replace exact text in a file. edits are applied in order, each to the result of the previous ones. Each old_string must match ' +
        'exactly once (whitespace and indentation included) unless replace_all is true, which replaces every match. All edits are checked ' +
        'before anything is written: if one fails, the file is left untouched and the error says which edit failed and why. ' +
        'LF line breaks in old_string also match a CRLF file, which keeps its CRLF endings; the file keeps its permissions. ' +
        `Files of any size: the file streams through the edits into its replacement. The answer shows a diff of the change (at most ${DIFF_MAX_LINES} lines).`,
      input: {
        path: z.string().min(1).describe('File path, absolute or relative to the working directory.'),
        edits: z
          .array(
            z.object({
              old_string: z.string().describe('Exact text to replace; not empty.'),
              new_string: z.string().describe('Replacement text; must differ from old_string.'),
              replace_all: z.boolean().optional().describe('Replace every match instead of requiring exactly one.'),
            }),
          )
          .min(1)
          .describe('One or more replacements, applied in order.'),
      },
      _meta: ALWAYS_LOAD,
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
    }),
    bash: toolShape({
      name: 'bash',
      title: 'Run a bash command',
      description:
        `Run a command with bash -c on this machine, in the server's working directory (resource://cwd) unless the command cd's elsewhere; ` +
        `nothing is read from stdin. timeout is in seconds: default ${defaultTimeout}, at most ${max}. ` +
        `On timeout or cancellation the command and every process it started are stopped, and the answer is an error. ` +
        `The answer starts with the exit code (a non-zero exit is a normal answer), then gives stdout and stderr ` +
        `separately; each stream returns at most its first ${BASH_OUTPUT_HEAD_BYTES / KiB} KiB and last ${BASH_OUTPUT_TAIL_BYTES / KiB} KiB, ` +
        `the middle elided, with the full output saved to a file you can read or grep (the command writes it there directly, as fast as a redirect; ` +
        `one that prints more than ${BASH_SAVED_OUTPUT_MAX_BYTES / GiB} GiB is stopped). tty: true runs it in a pseudo-terminal ` +
        `(for programs that need one; stdout and stderr then come merged). For long-running servers, start them in the background ` +
        `with their output redirected (nohup cmd > log 2>&1 &).`,
      input: {
        command: z.string().min(1).describe('The bash command line.'),
        timeout: z
          .number()
          .positive()
          .optional()
          .describe(`Seconds before the command is stopped (default ${defaultTimeout}, max ${max}).`),
        tty: z.boolean().optional().describe('Run in a pseudo-terminal; stdout and stderr are merged.'),
      },
      output: {
        exitCode: z.number().int().nullable(),
        signal: z.string().nullable(),
        timedOut: z.boolean(),
        cancelled: z.boolean(),
        serverStopped: z.boolean(),
        outputTooLarge: z.boolean(),
        durationMs: z.number(),
        stdout: z.string(),
        stderr: z.string(),
        stdoutFullOutputPath: z.string().optional(),
        stderrFullOutputPath: z.string().optional(),
      },
      _meta: ALWAYS_LOAD,
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
    }),
    skill: toolShape({
      name: 'skill',
      title: 'Load a skill',
      description:
        "Load one installed skill's full instructions and the paths of its bundled files (scripts, references, assets). " +
        'The catalog of skill names and descriptions is the resource resource://skills. Bundled file paths are relative to the ' +
        "skill's folder, which the answer gives; fetch them with read and run scripts with bash.",
      input: {
        name: z.string().min(1).describe('The skill name, as listed in resource://skills.'),
      },
      _meta: ALWAYS_LOAD,
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    }),
  };
}

/** The machine's own tools: read, write, edit, bash, skill; every one always loaded, so agents use them rather than their own. */
export function machineTools(deps: MachineToolDeps): SessionTool[] {
  const max = deps.commands.maxTimeoutSeconds;
  let shapes = shapesByMax.get(max);
  if (!shapes) shapesByMax.set(max, (shapes = machineToolShapes(max)));
  // Under place or strict, the file tools apply the policy's rules to what they open (file-target.ts).
  const rules = async (call: ToolExtra): Promise<FileRules | undefined> => (await deps.policy?.(call))?.sandbox;
  return [
    withHandler(shapes.read, (args, extra) => asToolResult(async () => readAnswer(await readFile(args, await rules(extra))))),
    withHandler(shapes.write, (args, extra) =>
      asToolResult(async () => {
        const result = await writeFile(args, await rules(extra));
        return text(`${result.created ? 'Created' : 'Overwrote'} ${result.path} (${result.bytes} bytes).`);
      }),
    ),
    withHandler(shapes.edit, (args, extra) =>
      asToolResult(async () => {
        const result = await editFile(args, await rules(extra));
        const summary = `Edited ${result.path}: ${plural(result.edits, 'edit')}, ${plural(result.replacements, 'replacement')}.`;
        return text(result.diff ? `${summary}\n\n${result.diff}` : `${summary} The content is the same as before.`);
      }),
    ),
    withHandler(shapes.bash, (args, extra) =>
      asToolResult(async () => {
        const { sandbox, outdated } = (await deps.policy?.(extra)) ?? {};
        const result = await deps.commands.run(args, {
          signal: extra.signal,
          onProgress: progressSender(extra),
          place: deps.place ?? '',
          ...(sandbox && { sandbox }),
          ...(outdated && { outdated }),
        });
        const answer = bashAnswer(result, args.timeout, max);
        if (sandbox && result.exitCode !== 0) answer.content.push({ type: 'text', text: sandbox.explanation() });
        return answer;
      }),
    ),
    withHandler(shapes.skill, (args) => asToolResult(async () => text(skillAnswer(await loadSkill(deps.skillsDir, args.name))))),
  ];
}

/** Registers resource://cwd (the server's working directory) and resource://skills (the skill catalog). */
export function registerMachineResources(server: McpServer, deps: { skillsDir: string }): void {
  server.registerResource(
    'cwd',
    'resource://cwd',
    {
      title: 'Working directory',
      description: "The server's working directory: where relative paths and bash commands start.",
      mimeType: 'text/plain',
    },
    (uri) => ({ contents: [{ uri: uri.href, mimeType: 'text/plain', text: process.cwd() }] }),
  );
  server.registerResource(
    'skills',
    'resource://skills',
    {
      title: 'Skill catalog',
      description: 'Installed skills, one per line as "name: description". Load one with the skill tool.',
      mimeType: 'text/plain',
    },
    async (uri) => ({
      contents: [{ uri: uri.href, mimeType: 'text/plain', text: skillCatalogText((await listSkills(deps.skillsDir)).skills) }],
    }),
  );
}

async function asToolResult(fn: () => Promise<CallToolResult>): Promise<CallToolResult> {
  try {
    return await fn();
  } catch (error) {
    if (error instanceof MachineError) return { isError: true, content: [{ type: 'text', text: error.message }] };
    throw error;
  }
}

function text(value: string): CallToolResult {
  return { content: [{ type: 'text', text: value }] };
}

function plural(count: number, word: string): string {
  return `${count} ${word}${count === 1 ? '' : 's'}`;
}

function readAnswer(result: ReadResult): CallToolResult {
  const content: CallToolResult['content'] = [];
  if (result.kind === 'text') {
    if (result.text !== '') content.push({ type: 'text', text: result.text });
  } else if (result.mimeType && result.offset === 0 && result.length === result.totalBytes) {
    content.push({ type: 'image', data: result.base64, mimeType: result.mimeType });
  } else {
    content.push({ type: 'text', text: result.base64 });
  }
  // The note is its own block so that the file's text stays exactly as it is in the file.
  if (result.note) content.push({ type: 'text', text: result.note });
  return { content };
}

/** Sends notifications/progress when the client asked for them (by giving a progress token). */
function progressSender(extra: ToolExtra): ((message: string) => void) | undefined {
  const progressToken = extra._meta?.progressToken;
  if (progressToken === undefined) return undefined;
  let progress = 0;
  return (message) => {
    progress += 1;
    extra.sendNotification({ method: 'notifications/progress', params: { progressToken, progress, message } }).catch(() => {
      // The client went away; the command's own result will report what happened.
    });
  };
}

function bashAnswer(result: BashResult, requestedTimeout: number | undefined, max: number): CallToolResult {
  const seconds = (result.durationMs / 1000).toFixed(1);
  const lines = [`${result.exitCode !== null ? `exit code ${result.exitCode}` : `ended by signal ${result.signal}`} after ${seconds}s`];
  if (result.timedOut) {
    lines.push(
      `Timed out after ${result.timeoutSeconds}s: the command and every process it started were stopped. ` +
        `Give a larger timeout (at most ${max}s) or run it in the background with its output redirected.`,
    );
  }
  if (result.cancelled) lines.push('Cancelled: the command and every process it started were stopped.');
  if (result.serverStopped) lines.push('The server is shutting down: the command and every process it started were stopped.');
  if (result.policyChanged) {
    lines.push(
      `Stopped: ${result.policyChanged}; the command and every process it started were stopped. Run it again: it runs under the new policy.`,
    );
  }
  if (result.outputTooLarge) {
    lines.push(
      `Its output passed ${BASH_SAVED_OUTPUT_MAX_BYTES / GiB} GiB, the most this server saves for one command: the command and every process it started were stopped. ` +
        'Redirect big outputs to a file of your own (cmd > out.log) and read or grep that.',
    );
  }
  if (requestedTimeout !== undefined && requestedTimeout > result.timeoutSeconds) {
    lines.push(`The timeout was lowered to ${result.timeoutSeconds}s, this server's maximum.`);
  }
  if (result.stderr) {
    lines.push(section('stdout', result.stdout), section('stderr', result.stderr));
  } else {
    lines.push(section('output (terminal: stdout and stderr merged)', result.stdout));
  }
  const structuredContent: Record<string, unknown> = {
    exitCode: result.exitCode,
    signal: result.signal,
    timedOut: result.timedOut,
    cancelled: result.cancelled,
    serverStopped: result.serverStopped,
    outputTooLarge: result.outputTooLarge,
    durationMs: result.durationMs,
    stdout: result.stdout.text,
    stderr: result.stderr?.text ?? '',
  };
  if (result.stdout.fullOutputPath) structuredContent['stdoutFullOutputPath'] = result.stdout.fullOutputPath;
  if (result.stderr?.fullOutputPath) structuredContent['stderrFullOutputPath'] = result.stderr.fullOutputPath;
  // A command that was stopped before it finished did not do its job: an error, whatever it printed.
  // A non-zero exit is the command's own answer, not a failure of the call.
  const stopped =
    result.timedOut || result.cancelled || result.serverStopped || result.outputTooLarge || result.policyChanged !== undefined;
  return { content: [{ type: 'text', text: lines.join('\n') }], structuredContent, ...(stopped && { isError: true }) };
}

function section(label: string, output: CapturedOutput): string {
  const parts = [`--- ${label} ---`, output.text === '' ? '(empty)' : output.text.replace(/\n$/, '')];
  if (output.elidedBytes > 0) {
    parts.push(
      output.fullOutputPath
        ? `[${output.totalBytes} bytes in all; the full ${label.split(' ')[0]} is in ${output.fullOutputPath} (read it, or grep it with bash)${output.fullOutputKept ? `, ${output.fullOutputKept}` : ''}]`
        : `[${output.totalBytes} bytes in all; the middle was not kept]`,
    );
  }
  if (output.fullOutputProblem) parts.push(`[${output.fullOutputProblem}]`);
  return parts.join('\n');
}

function skillAnswer(skill: LoadedSkill): string {
  const lines = [`# Skill: ${skill.name}`, skill.description, '', `Folder: ${skill.dir}`];
  if (skill.compatibility) lines.push(`Compatibility: ${skill.compatibility}`);
  if (skill.allowedTools) lines.push(`Allowed tools: ${skill.allowedTools}`);
  if (skill.files.length > 0) {
    lines.push('Bundled files (relative to the folder; fetch them with read):', ...skill.files.map((file) => `- ${file}`));
    if (skill.unlistedFiles > 0) lines.push(`- ... and ${skill.unlistedFiles} more (list them with bash: find '${skill.dir}')`);
  }
  lines.push('', skill.instructions.trim());
  return lines.join('\n');
}
