import { ApiError } from '../api/client';

/** A failed load or action: what happened, in the API's words, and what to do next. */
export function ErrorNote({
  error,
  title,
  onRetry,
  retrying,
}: {
  error: unknown;
  title?: string;
  onRetry?: () => void;
  retrying?: boolean;
}) {
  return (
    <div className="note note-error" role="alert">
      <div>
        {title && <strong>{title} </strong>}
        {messageOf(error)}
      </div>
      {onRetry && (
        <button type="button" className="button" onClick={onRetry} disabled={retrying}>
          {retrying ? 'Retrying…' : 'Retry'}
        </button>
      )}
    </div>
  );
}

export function messageOf(error: unknown): string {
  if (error instanceof ApiError) {
    if (error.status === 401) return `${error.message}`;
    return error.message;
  }
  return error instanceof Error ? error.message : 'Something went wrong. Try again.';
}
