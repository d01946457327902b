import Markdown, { type Components } from 'react-markdown';
import remarkGfm from 'remark-gfm';

// SKILL.md is text someone wrote or downloaded: it is rendered as GitHub-flavoured Markdown (tables,
// task lists, strikethrough, autolinks) only. Raw HTML is dropped (skipHtml), so it cannot add
// scripts, styles or frames; react-markdown already strips javascript: and other unsafe URLs.
const components: Components = {
  // The page owns h1 and h2 (the section, the skill): the file's headings sit below them.
  h1: 'h3',
  h2: 'h4',
  h3: 'h5',
  h4: 'h6',
  h5: 'h6',
  h6: 'h6',
  // Pictures are not fetched: a skill's file should not make the page load anything from elsewhere.
  img: ({ alt }) => <span className="muted">[picture{alt ? `: ${alt}` : ''}]</span>,
  // Web links open outside the page; a link to a file of the skill means nothing to the page, so it is text.
  a: ({ href, children }) =>
    href && /^(https?:|mailto:)/i.test(href) ? (
      <a href={href} target="_blank" rel="noopener noreferrer">
        {children}
      </a>
    ) : (
      <span className="skill-link">{children}</span>
    ),
  // A wide table scrolls inside the page, not the page itself; the keyboard can scroll it too.
  table: ({ children }) => (
    <div className="table-scroll" tabIndex={0}>
      <table>{children}</table>
    </div>
  ),
  // A task list's boxes show the file's state; ticking them here would change nothing.
  input: ({ type, checked }) =>
    type === 'checkbox' ? <input type="checkbox" checked={!!checked} readOnly disabled aria-label={checked ? 'Done' : 'Not done'} /> : null,
};

export function SkillMarkdown({ text }: { text: string }) {
  return (
    <div className="skill-markdown">
      <Markdown skipHtml remarkPlugins={[remarkGfm]} components={components}>
        {text}
      </Markdown>
    </div>
  );
}
