import Markdown, { type Components } from 'react-markdown';

// SKILL.md is text someone wrote or downloaded: it is rendered as Markdown only. Raw HTML is dropped
// (skipHtml), so it cannot add scripts, styles or frames; react-markdown already strips javascript:
// and other unsafe URLs.
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
};

export function SkillMarkdown({ text }: { text: string }) {
  return (
    <div className="skill-markdown">
      <Markdown skipHtml components={components}>
        {text}
      </Markdown>
    </div>
  );
}
