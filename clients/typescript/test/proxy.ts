// A real HTTP hop between the client and the live provider that misbehaves on request: it loses
// an answer after the provider has acted on the request (the connection is cut), answers 503
// itself, or holds a request unanswered. It records every request body it saw.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export type Behaviour = "pass" | "lose-answer" | "unavailable" | "hold";

export class Proxy {
  readonly seen: { path: string; body: { [key: string]: unknown } }[] = [];
  readonly plan: Behaviour[] = [];
  #server: Server;
  #upstream: string;
  #held: ServerResponse[] = [];
  #waiters: (() => void)[] = [];

  private constructor(upstream: string) {
    this.#upstream = upstream.replace(/\/+$/, "");
    this.#server = createServer((req, res) => void this.#handle(req, res));
  }

  static async start(upstream: string): Promise<Proxy> {
    const proxy = new Proxy(upstream);
    await new Promise<void>((resolve) => proxy.#server.listen(0, "127.0.0.1", resolve));
    return proxy;
  }

  get url(): string {
    const { port } = this.#server.address() as AddressInfo;
    return `http://127.0.0.1:${port}`;
  }

  /** Resolves once `n` requests have arrived. */
  async arrived(n: number): Promise<void> {
    while (this.seen.length < n) await new Promise<void>((resolve) => this.#waiters.push(resolve));
  }

  async close(): Promise<void> {
    for (const res of this.#held) res.destroy();
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks).toString("utf8");
    this.seen.push({ path: req.url ?? "", body: raw ? JSON.parse(raw) : {} });
    for (const wake of this.#waiters.splice(0)) wake();
    const behaviour = this.plan.shift() ?? "pass";
    if (behaviour === "hold") {
      this.#held.push(res);
      return;
    }
    if (behaviour === "unavailable") {
      const body = { error: { code: "unavailable", message: "proxy says: try again", extensions: {} } };
      res.writeHead(503, { "Content-Type": "application/json", "Retry-After": "0" });
      res.end(JSON.stringify(body));
      return;
    }
    const headers: Record<string, string> = {};
    for (const name of ["authorization", "content-type", "accept", "spoke-session"]) {
      const value = req.headers[name];
      if (typeof value === "string") headers[name] = value;
    }
    const answer = await fetch(this.#upstream + (req.url ?? ""), { method: req.method ?? "POST", headers, body: raw || undefined });
    const text = await answer.text();
    if (behaviour === "lose-answer") {
      req.socket.destroy(); // the provider acted; its answer never reaches the client
      return;
    }
    res.writeHead(answer.status, { "Content-Type": answer.headers.get("content-type") ?? "application/json" });
    res.end(text);
  }
}
