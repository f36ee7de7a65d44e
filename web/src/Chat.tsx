import { useEffect, useRef, useState, type FormEvent, type KeyboardEvent } from "react";
import { api, post, when, type Conversation, type LiveEvent, type Turn } from "./api";

const DESK_KINDS = new Set(["CustomerMessage"]);

type Props = {
  tick: number;
  lastEvent: LiveEvent | null;
  session: string | null;
  setSession: (s: string | null) => void;
  nonce: number; // moves when someone else (Judge mode) said something in this conversation
};

export function Chat({ tick, lastEvent, session, setSession, nonce }: Props) {
  const [turns, setTurns] = useState<Turn[]>([]);
  const [pending, setPending] = useState<string[]>([]);
  const [text, setText] = useState("");
  const [sending, setSending] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [past, setPast] = useState<Conversation[]>([]);
  const logRef = useRef<HTMLOListElement>(null);

  useEffect(() => {
    api<{ conversations: Conversation[] }>("/me/conversations").then((r) => setPast(r.conversations)).catch(() => {});
  }, [tick, session]);

  useEffect(() => {
    if (!session) {
      setTurns([]);
      return;
    }
    api<{ turns: Turn[] }>(`/me/conversations/${encodeURIComponent(session)}`)
      .then((r) => {
        setTurns(r.turns);
        setPending((p) => p.filter((t) => !r.turns.some((x) => x.text === t)));
      })
      .catch(() => {});
    // Re-read when a reply in this conversation arrives on the live feed.
  }, [session, nonce, lastEvent?.kind === "reply" && lastEvent.session === session ? lastEvent.id : null]);

  useEffect(() => {
    logRef.current?.lastElementChild?.scrollIntoView({ block: "end" });
  }, [turns, pending]);

  const send = async (e?: FormEvent) => {
    e?.preventDefault();
    const said = text.trim();
    if (!said || sending) return;
    setSending(true);
    setError(null);
    setPending((p) => [...p, said]);
    setText("");
    try {
      const r = await post<{ session: string }>("/me/chat", session ? { text: said, session } : { text: said });
      setSession(r.session);
    } catch (err) {
      setError((err as Error).message);
      setPending((p) => p.filter((t) => t !== said));
      setText(said);
    } finally {
      setSending(false);
    }
  };

  const onKey = (e: KeyboardEvent<HTMLTextAreaElement>) => {
    if (e.key === "Enter" && !e.shiftKey) {
      e.preventDefault();
      void send();
    }
  };

  const fresh = () => {
    setSession(null);
    setPending([]);
  };

  return (
    <div className="chat">
      <aside className="past" aria-label="Your conversations">
        <button className="new" onClick={fresh}>+ New conversation</button>
        <ul>
          {past.map((c) => (
            <li key={c.session}>
              <button className={c.session === session ? "conv on" : "conv"} onClick={() => setSession(c.session)}
                aria-current={c.session === session ? "true" : undefined}>
                <span className="conv-text">{c.first_text ?? "(conversation)"}</span>
                <span className="muted small">{when(c.started_at)}</span>
              </button>
            </li>
          ))}
        </ul>
      </aside>
      <section className="talk" aria-label="Conversation with the desk">
        <ol className="log" ref={logRef} aria-live="polite" aria-relevant="additions">
          {turns.length === 0 && pending.length === 0 ? (
            <li className="turn desk">
              <div className="bubble">Hello! Tell us what is going on, in your own words. We will take it from there.</div>
            </li>
          ) : null}
          {turns.map((t) => {
            const mine = DESK_KINDS.has(t.kind ?? "");
            return (
              <li key={t.episode_id} className={mine ? "turn me" : "turn desk"} data-testid={mine ? "my-turn" : "desk-reply"}>
                <span className="sr-only">{mine ? "You said:" : "The desk replied:"}</span>
                <div className="bubble">{t.text}</div>
                <div className="meta muted small">{mine ? "you" : t.speaker ?? "desk"} · {when(t.at)}</div>
                {!mine && (t.sources ?? []).length > 0 ? (
                  <details className="how" data-testid="sources">
                    <summary>How I know</summary>
                    <ul>{t.sources.map((h, i) => <li key={i}>{h}</li>)}</ul>
                  </details>
                ) : null}
              </li>
            );
          })}
          {pending.map((p, i) => (
            <li key={`p${i}`} className="turn me pending">
              <div className="bubble">{p}</div>
              <div className="meta muted small">sending…</div>
            </li>
          ))}
        </ol>
        <form className="say" onSubmit={send}>
          <label htmlFor="say" className="sr-only">Your message to the desk</label>
          <textarea id="say" rows={2} value={text} onChange={(e) => setText(e.target.value)} onKeyDown={onKey}
            placeholder="Type your message; Enter sends, Shift+Enter starts a new line" maxLength={8000} />
          <button type="submit" disabled={sending || !text.trim()}>Send</button>
        </form>
        {error ? <p role="alert" className="problem">{error}</p> : null}
      </section>
    </div>
  );
}
