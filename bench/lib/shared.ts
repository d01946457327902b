/** What the baseline server's one tool is called and answers; the bench checks the answer. */
export const BASELINE_TOOL = 'fixed';
export const BASELINE_TEXT = 'hello from the bare SDK server';

/** The 1 KiB text file the `read` benchmark reads: 16 lines of 64 bytes. */
export const TEXT_1K = Array.from({ length: 16 }, (_, i) => `line ${String(i + 1).padStart(2, '0')} `.padEnd(63, 'abcdefgh') + '\n').join('');

/** The gateway benchmark: the place whose connection is called, the API key header, the echo text. */
export const BENCH_PLACE = 'Crew/bench';
export const KEY_HEADER = 'X-Api-Key';
export const ECHO_TEXT = 'hello from the gateway bench';
