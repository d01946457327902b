import porter2 from 'wink-porter2-stemmer';

const stems = new Map<string, string>();
const MAX_STEMS = 50_000;

const STOP_WORDS = new Set(
  "a an and are as at be by can could do does for from how i im i'm in into is it its just me my of on or our please so some that the their them then there this to us we what whats when where which who why will with would you your".split(
    ' ',
  ),
);

/** Shorthand people write for the words tools use, read as those words on both sides. */
const ABBREVIATIONS: Record<string, string> = {
  pr: 'pull request',
  prs: 'pull requests',
  mr: 'merge request',
  mrs: 'merge requests',
  repo: 'repository',
  repos: 'repositories',
  db: 'database',
  dm: 'direct message',
  msg: 'message',
  config: 'configuration',
  org: 'organization',
  orgs: 'organizations',
  env: 'environment',
  prod: 'production',
  dev: 'development',
  info: 'information',
  todo: 'to do',
  lgtm: 'approve',
};

/**
 * What a person's word may mean in the words tools use, one way only: a query's "ticket" also
 * looks for "issue", but a tool's "issue" stays an issue. Each widening counts less than the word
 * itself (RELATED_WEIGHT), and a word counts once per tool, by its best meaning there.
 */
const RELATED: Record<string, string> = {
  ticket: 'issue',
  bug: 'issue',
  task: 'issue item',
  story: 'issue',
  make: 'create',
  new: 'create',
  start: 'create run',
  spin: 'create',
  raise: 'create',
  file: 'create',
  put: 'create',
  add: 'create append insert',
  write: 'create draft update',
  book: 'create event',
  schedule: 'create event',
  edit: 'update',
  change: 'update modify',
  modify: 'update',
  rename: 'update',
  fix: 'update',
  set: 'update',
  mark: 'update modify',
  move: 'move update',
  push: 'update push',
  reschedule: 'update',
  remove: 'delete',
  erase: 'delete',
  trash: 'delete',
  wipe: 'delete',
  drop: 'delete',
  cancel: 'delete',
  discard: 'delete reset',
  show: 'get list',
  view: 'get',
  see: 'get list',
  open: 'get read',
  look: 'get search',
  read: 'get retrieve',
  details: 'get',
  find: 'search',
  lookup: 'search',
  where: 'search',
  exception: 'error',
  crash: 'error issue',
  crashing: 'error issue',
  failure: 'error fail',
  broken: 'error fail',
  blowing: 'error issue',
  member: 'user',
  members: 'user',
  people: 'user',
  person: 'user',
  teammate: 'user',
  who: 'user',
  account: 'user authenticated',
  logged: 'authenticated user',
  login: 'authenticated user',
  access: 'user',
  reply: 'reply comment',
  answer: 'reply respond',
  respond: 'reply respond',
  note: 'comment',
  feedback: 'comment',
  tag: 'label',
  folder: 'label',
  category: 'label',
  deploy: 'deploy release',
  ship: 'deploy release merge',
  rollout: 'deploy release',
  release: 'release deploy',
  build: 'pipeline build job',
  ci: 'pipeline build',
  rerun: 'rerun retry',
  retry: 'rerun retry',
  again: 'rerun',
  message: 'message post',
  tell: 'post message send',
  ping: 'post message',
  notify: 'post message send',
  announce: 'post message',
  say: 'post message',
  conversation: 'thread messages replies',
  email: 'email message send',
  mail: 'email',
  inbox: 'email label',
  meeting: 'event',
  appointment: 'event',
  call: 'event',
  invite: 'event invitation',
  invitation: 'event',
  interview: 'event',
  free: 'freebusy free busy',
  available: 'freebusy free',
  availability: 'freebusy',
  approve: 'review approve',
  approved: 'review approve',
  sign: 'approve',
  copy: 'fork duplicate',
  clone: 'fork',
  green: 'status pass',
  red: 'status fail',
  passing: 'pass status',
  failing: 'fail flaky',
  healthy: 'status',
  down: 'status error',
  slow: 'profile performance',
  performance: 'profile',
  cause: 'analyze root',
  why: 'analyze logs fail',
  screenshot: 'attachment',
  trace: 'stack event',
  stacktrace: 'stack event',
  key: 'key token',
  secret: 'key secret',
  token: 'key token',
  sleep: 'pause',
  idle: 'pause',
  stop: 'pause',
  suspend: 'pause',
  wake: 'restore resume',
  resume: 'restore',
  promote: 'merge',
  count: 'count statistics',
  many: 'count statistics',
  rule: 'filter',
  rules: 'filter',
  sorting: 'filter',
  react: 'reaction',
  emoji: 'reaction',
  thumbs: 'reaction',
  revert: 'rollback',
  undo: 'rollback',
  roll: 'rollback',
  back: 'rollback',
  trigger: 'run',
  kick: 'run rerun',
  report: 'artifact',
  artifact: 'artifact',
  coverage: 'artifact test',
  cost: 'cost usage',
  price: 'cost',
  pay: 'cost usage',
  paying: 'cost usage',
  spend: 'cost usage',
  valid: 'validate',
  lint: 'validate',
  documentation: 'docs',
  doc: 'page document search',
  docs: 'documentation',
  howto: 'docs guide',
  paragraph: 'block',
  heading: 'block',
  board: 'database data source',
  tracker: 'database',
  address: 'url',
  endpoint: 'url',
};
const RELATED_WEIGHT = 0.6;

/** Words that say when: a query with one also looks for tools that take a time (TIME). */
const TIME_WORDS = new Set(
  'today tomorrow yesterday tonight week weekend month year hour hours minute minutes morning afternoon evening night recent recently latest last since ago now earlier later monday tuesday wednesday thursday friday saturday sunday'
    .split(' ')
    .map(stem),
);
/** Parameter words of tools that take a time. */
const TIME_PARAMETER_WORDS = new Set('time date datetime since until period timestamp day hour'.split(' ').map(stem));
/** A term no text has: a tool that takes a time, met by a query that says when. */
export const TIME = '@time';
const TIME_WEIGHT = 0.5;
const CLOCK = /^\d{1,2}(?::\d\d)?(?:am|pm)$/;

/** First words of a question or a request to see: the query wants a tool that reads. */
const ASKING = new Set(
  'who what whats when where which why how is are was were did do does any show list find catch check look see tell_me give_me'.split(' '),
);
/** First words of an order: the query wants a tool that changes something. */
const ORDERING = new Set(
  'create add make new post send email tell ping reply answer close merge approve delete remove cancel update change edit rename move push mark set start spin put book schedule block accept decline write jot leave archive trash wipe ignore fix commit deploy ship promote throw wake generate kick rerun roll automatically bring give open'.split(
    ' ',
  ),
);

/** Porter2's stem, so that "reminder" meets "remind" and "deployment" "deploy"; words with digits as they are. */
function stem(word: string): string {
  if (/\d/.test(word)) return word;
  let stemmed = stems.get(word);
  if (stemmed === undefined) {
    // Queries are an agent's words: the memo is bounded.
    if (stems.size >= MAX_STEMS) stems.clear();
    stems.set(word, (stemmed = porter2(word)));
  }
  return stemmed;
}

/** A text's words: split at punctuation, `snake_case` and `camelCase`, lower case, stop words out. */
function wordsOf(text: string): string[] {
  return (
    text
      // "Tom's", "who's": the name, the word.
      .replace(/['’]s\b/g, '')
      // "#general": a chat channel.
      .replace(/#(?=[A-Za-z0-9])/g, 'channel ')
      .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
      .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
      .toLowerCase()
      .replace(/'/g, '')
      .split(/[^a-z0-9]+/)
      .filter((word) => word.length > 0 && !STOP_WORDS.has(word))
      .flatMap((word) => (ABBREVIATIONS[word] ?? word).split(' '))
  );
}

const termsOf = new Map<string, readonly string[]>();
let termsOfChars = 0;
/** Texts remembered by searchTerms, in characters: every session indexes the same tools' texts again. */
const MAX_TERMS_CHARS = 8_000_000;

/** The terms of a text: its words, with abbreviations spelled out, stemmed. */
export function searchTerms(text: string): readonly string[] {
  let terms = termsOf.get(text);
  if (terms === undefined) {
    terms = wordsOf(text).map(stem);
    if (termsOfChars + text.length > MAX_TERMS_CHARS) {
      termsOf.clear();
      termsOfChars = 0;
    }
    termsOf.set(text, terms);
    termsOfChars += text.length;
  }
  return terms;
}

export interface QueryWord {
  term: string;
  weight: number;
}

/**
 * A query's words, each with what else it may mean (its alternatives, itself first at weight 1),
 * plus TIME when it says when; and whether it asks (true), orders (false) or neither.
 */
export function queryWords(query: string): { words: QueryWord[][]; asks: boolean | undefined } {
  const raw = query
    .toLowerCase()
    .replace(/['’]s\b/g, '')
    .replace(/['’]/g, '')
    .split(/[^a-z0-9:]+/)
    .filter(Boolean);
  const first = raw[0] === 'please' ? raw[1] : raw[0];
  const asks =
    first === undefined
      ? undefined
      : ASKING.has(first) || ASKING.has(`${first}_${raw[1]}`)
        ? true
        : ORDERING.has(first)
          ? false
          : undefined;
  const words: QueryWord[][] = [];
  let when = raw.some((word) => CLOCK.test(word));
  for (const word of wordsOf(query)) {
    const term = stem(word);
    if (TIME_WORDS.has(term)) when = true;
    const related = RELATED[word] ?? RELATED[term];
    const alternatives: QueryWord[] = [{ term, weight: 1 }];
    for (const other of related ? related.split(' ').map(stem) : []) {
      if (!alternatives.some((a) => a.term === other)) alternatives.push({ term: other, weight: RELATED_WEIGHT });
    }
    words.push(alternatives);
  }
  // Questions lead with words the stop list drops ("who", "why"): they still mean something.
  for (const word of raw.slice(0, 1))
    if (STOP_WORDS.has(word) && RELATED[word])
      words.push(RELATED[word]!.split(' ').map((w) => ({ term: stem(w), weight: RELATED_WEIGHT })));
  if (when) words.push([{ term: TIME, weight: TIME_WEIGHT }]);
  return { words, asks };
}

/** Whether a tool's parameter terms say it takes a time. */
export function takesTime(parameterTerms: Iterable<string>): boolean {
  for (const term of parameterTerms) if (TIME_PARAMETER_WORDS.has(term)) return true;
  return false;
}

const MAX_PARAMETER_DEPTH = 3;
const MAX_PARAMETER_TEXT = 4000;

/**
 * The words of a tool's input schema: each property's name, description and allowed values,
 * nested properties too (some servers wrap all in one object), cut at 4,000 characters.
 */
export function parameterText(schema: unknown): string {
  const parts: string[] = [];
  let length = 0;
  const visit = (node: unknown, depth: number): void => {
    if (depth > MAX_PARAMETER_DEPTH || length > MAX_PARAMETER_TEXT || typeof node !== 'object' || node === null) return;
    const { properties, items, enum: allowed } = node as { properties?: unknown; items?: unknown; enum?: unknown };
    if (Array.isArray(allowed)) add(allowed.filter((v) => typeof v === 'string').join(' '));
    if (typeof properties === 'object' && properties !== null) {
      for (const [name, property] of Object.entries(properties)) {
        add(name);
        const description = (property as { description?: unknown } | null)?.description;
        if (typeof description === 'string') add(description);
        visit(property, depth + 1);
      }
    }
    if (items) visit(items, depth + 1);
  };
  const add = (text: string) => {
    parts.push(text);
    length += text.length + 1;
  };
  visit(schema, 0);
  return parts.join(' ').slice(0, MAX_PARAMETER_TEXT);
}
