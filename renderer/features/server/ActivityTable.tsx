import { useQuery } from '@tanstack/react-query';
import { useEffect, useRef, useState } from 'react';
import { tokensQuery } from '../../api/access';
import { activityQuery, ACTIVITY_LIMIT, type ActivityRecord } from '../../api/server';
import type { Place } from '../../api/connections';
import { ErrorNote, messageOf } from '../../ui/ErrorNote';
import { callerWords, tokenIdOf, durationWords, OUTCOME_WORDS, plainError, shortError, timeWords, toolWords } from './activity-words';
import { placeLabel } from './server-words';

const OUTCOME_CLASS: Record<ActivityRecord['outcome'], string> = {
  ok: 'state-connected',
  error: 'state-needs-secret',
  timeout: 'state-needs-secret',
  cancelled: 'state-paused',
};

/** The last tool calls from the audit log, newest first; polled while the screen is open. */
export function ActivityTable({ places }: { places: Place[] }) {
  const activity = useQuery(activityQuery);
  // Names for the app's tokens; without them the caller is shown by its id.
  const tokens = useQuery(tokensQuery);
  useNamesForNewTokens(activity.data?.records, tokens);

  return (
    <section className="group" aria-labelledby="activity-heading">
      <h2 id="activity-heading">Recent activity</h2>
      <p className="hint activity-hint">The last {ACTIVITY_LIMIT} tool calls agents made, from the audit log. It updates by itself.</p>
      {activity.isPending ? (
        <p className="muted" role="status">
          Loading recent activity…
        </p>
      ) : activity.isError && !activity.data ? (
        <ErrorNote
          error={activity.error}
          title="The recent activity could not be loaded."
          onRetry={() => void activity.refetch()}
          retrying={activity.isFetching}
        />
      ) : !activity.data.records.length ? (
        <p className="empty">No tool calls yet. When an agent uses a tool, it shows here within a few seconds.</p>
      ) : (
        <>
          {activity.isError && (
            <p className="note note-error" role="alert">
              Not up to date: {messageOf(activity.error)} Trying again…
            </p>
          )}
          <div className="table-wrap">
            <table className="activity" aria-labelledby="activity-heading">
              <thead>
                <tr>
                  <th scope="col">Time</th>
                  <th scope="col">Tool</th>
                  <th scope="col">Caller</th>
                  <th scope="col">Place</th>
                  <th scope="col" className="num">
                    Duration
                  </th>
                  <th scope="col">Outcome</th>
                </tr>
              </thead>
              <tbody>
                {[...activity.data.records].reverse().map((record, i) => {
                  const caller = callerWords(record.caller, tokens.data?.tokens, record.client);
                  return (
                    <tr key={`${record.time}\n${i}`}>
                      <td data-label="Time">
                        <time dateTime={record.time} title={new Date(record.time).toLocaleString()}>
                          {timeWords(record.time)}
                        </time>
                      </td>
                      <td data-label="Tool">
                        {record.connection ? (
                          <span className="tool">{toolWords(record)}</span>
                        ) : (
                          <code className="tool">{record.tool}</code>
                        )}
                      </td>
                      <td data-label="Caller">
                        {caller.name}
                        <div className="muted small">{caller.detail}</div>
                      </td>
                      <td data-label="Place">
                        {record.place === undefined ? <span className="muted">Not recorded</span> : placeLabel(record.place, places)}
                      </td>
                      <td className="num" data-label="Duration">
                        {durationWords(record.durationMs)}
                      </td>
                      <td data-label="Outcome">
                        <span className={`state ${OUTCOME_CLASS[record.outcome]}`}>{OUTCOME_WORDS[record.outcome]}</span>
                        {record.error && <ActivityError text={plainError({ ...record, error: record.error })} />}
                      </td>
                    </tr>
                  );
                })}
              </tbody>
            </table>
          </div>
        </>
      )}
    </section>
  );
}

/** A call by a token made after the list was loaded: load the list again, once per such token, so it shows by name. */
function useNamesForNewTokens(
  records: ActivityRecord[] | undefined,
  tokens: { data?: { tokens: { id: string }[] } | undefined; isFetching: boolean; refetch: () => unknown },
) {
  const asked = useRef(new Set<string>());
  useEffect(() => {
    if (!records || !tokens.data || tokens.isFetching) return;
    const known = new Set(tokens.data.tokens.map((t) => t.id));
    const unknown = records
      .map((r) => tokenIdOf(r.caller))
      .filter((id): id is string => id !== undefined && !known.has(id) && !asked.current.has(id));
    if (!unknown.length) return;
    for (const id of unknown) asked.current.add(id);
    void tokens.refetch();
  }, [records, tokens]);
}

/** A failure's reason: its start, and all of it one click away. */
function ActivityError({ text }: { text: string }) {
  const [all, setAll] = useState(false);
  const short = shortError(text);
  return (
    <div className="muted small activity-error">
      {all ? text : short}
      {short !== text && (
        <>
          {' '}
          <button type="button" className="link-button" aria-expanded={all} onClick={() => setAll(!all)}>
            {all ? 'Show less' : 'Show all'}
          </button>
        </>
      )}
    </div>
  );
}
