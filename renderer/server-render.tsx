import { renderToString } from 'react-dom/server';
import type { RenderFirstScreen } from '../common/api/first-screen.js';
import { fillFirstScreen, firstScreenIn } from './app/first-screen';
import { Page, pageClient } from './app/Page';

/**
 * The first screen as HTML, for the host to put in the signed-in owner's index: the page's own tree
 * over a query cache filled from the very JSON the index carries, as the browser fills it before it
 * takes this HTML over (hydrateRoot in start.tsx). React escapes every text and attribute in it.
 */
export const renderFirstScreen: RenderFirstScreen = (json) => {
  const carried = firstScreenIn(json);
  if (!carried) throw new Error('The first screen’s data does not match the page’s schemas.');
  const client = pageClient();
  fillFirstScreen(client, carried);
  try {
    return renderToString(<Page client={client} />);
  } finally {
    client.clear();
  }
};
