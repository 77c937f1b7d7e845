/**
 * Server-sent events as the HTML standard defines the stream: lines ended by CRLF, LF or CR;
 * `data:` lines joined by newlines; `id:` kept until changed (it is what a reconnect sends as
 * `Last-Event-ID`); `retry:` the reconnection delay; lines starting with `:` are comments.
 */

/** One dispatched event, its data still text. */
export interface ServerSentEvent {
  /** The last event id the stream set (undefined before any `id:` line). */
  id: string | undefined;
  /** The `event:` field, `message` when there was none. */
  event: string;
  data: string;
}

/** Feed it decoded text in chunks of any size; it returns the events each chunk completed. */
export class SseParser {
  /** The id a reconnect resumes from (survives events without an `id:` line). */
  lastEventId: string | undefined = undefined;
  /** Milliseconds the server asked to wait before reconnecting, when it did. */
  retryMs: number | undefined = undefined;
  private buffer = "";
  private afterCR = false;
  private started = false;
  private data: string[] = [];
  private event = "";

  feed(chunk: string): ServerSentEvent[] {
    let text = chunk;
    if (!this.started && text.length > 0) {
      this.started = true;
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    }
    // a CR ending the previous chunk already ended its line: an LF right after it is not a new one
    if (this.afterCR && text.startsWith("\n")) text = text.slice(1);
    this.afterCR = false;
    const out: ServerSentEvent[] = [];
    this.buffer += text;
    let start = 0;
    for (let i = 0; i < this.buffer.length; i++) {
      const c = this.buffer[i];
      if (c !== "\n" && c !== "\r") continue;
      const line = this.buffer.slice(start, i);
      if (c === "\r") {
        if (i + 1 === this.buffer.length) this.afterCR = true;
        else if (this.buffer[i + 1] === "\n") i++;
      }
      start = i + 1;
      const dispatched = this.line(line);
      if (dispatched) out.push(dispatched);
    }
    this.buffer = this.buffer.slice(start);
    return out;
  }

  private line(line: string): ServerSentEvent | undefined {
    if (line === "") return this.dispatch();
    if (line.startsWith(":")) return undefined;
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "data") this.data.push(value);
    else if (field === "event") this.event = value;
    else if (field === "id" && !value.includes("\0")) this.lastEventId = value;
    else if (field === "retry" && /^\d+$/.test(value)) this.retryMs = Number(value);
    return undefined;
  }

  private dispatch(): ServerSentEvent | undefined {
    const data = this.data;
    const event = this.event || "message";
    this.data = [];
    this.event = "";
    if (data.length === 0) return undefined;
    return { id: this.lastEventId, event, data: data.join("\n") };
  }
}
