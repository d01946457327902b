import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { setPlaceToolSearch, toolSearchQuery, type PlaceToolSearch, type ToolSearchMode } from '../../api/access';
import type { Place } from '../../api/connections';
import { ErrorNote } from '../../ui/ErrorNote';

/** What the place's agents get now, in one line: the result of counting its tools just now. */
export function toolSearchState(state: PlaceToolSearch): string {
  const why =
    state.by === 'automatic' ? `${state.toolCount} tools, ${state.on ? 'more than' : 'no more than'} ${state.threshold}` : 'set here';
  return state.on
    ? `On (${why}): agents get the machine's tools with search_tools and call_tool, which find and run the connections' tools.`
    : `Off (${why}): agents get all ${state.toolCount} tools.`;
}

/**
 * The place's tool search: for clients that take a limited number of tools (Cursor about 40), its
 * agents get two tools that search and call the connections' tools. A token's own setting wins.
 */
export function ToolSearchSetting({ place }: { place: Place }) {
  const client = useQueryClient();
  const state = useQuery(toolSearchQuery(place.root));
  const change = useMutation({
    mutationFn: (mode: ToolSearchMode) => setPlaceToolSearch(place.root, mode),
    onSuccess: (answer) => client.setQueryData(toolSearchQuery(place.root).queryKey, answer),
  });
  return (
    <section aria-labelledby="tool-search-heading" className="group">
      <h2 id="tool-search-heading">Tool search</h2>
      {state.isPending ? (
        <p className="muted" role="status">
          Counting the place’s tools…
        </p>
      ) : state.isError ? (
        <ErrorNote
          error={state.error}
          title="Tool search could not be loaded."
          onRetry={() => void state.refetch()}
          retrying={state.isFetching}
        />
      ) : (
        <div className="tool-search">
          <label className="field">
            <span className="field-label">For agents in {place.label}</span>
            <select value={state.data.mode} disabled={change.isPending} onChange={(e) => change.mutate(e.target.value as ToolSearchMode)}>
              <option value="auto">Automatic (above {state.data.threshold} tools)</option>
              <option value="on">On</option>
              <option value="off">Off</option>
            </select>
          </label>
          <p className="hint" role="status">
            {toolSearchState(state.data)} A token set otherwise on Agent access wins.
          </p>
        </div>
      )}
      {change.isError && <ErrorNote error={change.error} title="Tool search was not changed." />}
    </section>
  );
}
