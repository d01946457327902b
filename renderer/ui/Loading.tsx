/** Said while a part of the page (its data, or its code on first opening) is on its way. */
export function Loading() {
  return (
    <p className="muted" role="status">
      Loading…
    </p>
  );
}
