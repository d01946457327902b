/** The media type of a Content-Type header, lowercased, without its parameters ('' when absent). */
export function mediaType(header: string | null | undefined): string {
  return (header ?? '').split(';', 1)[0]!.trim().toLowerCase();
}
