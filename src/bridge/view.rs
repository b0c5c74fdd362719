//! What a remote caller sees of a run: the run view with its 16 KiB output window, the
//! list view with `output_preview`, and event pages — every text through the redactor,
//! with stored context on each side so a secret split across windows or events is still
//! masked, and the live-edge rule while the run can still grow.

use super::ledger::{self, Run, StoredEvent};
use crate::base::error::{Error, Kind, Result};
use crate::base::redact;
use crate::store::Store;
use serde_json::{Map, Value, json};

/// Output window size.
pub const WINDOW: usize = 16 * 1024;
/// Other texts are cut at this size with `truncated: true`.
pub const TEXT_MAX: usize = 16 * 1024;
/// Context on each side of a window or a run of text events.
pub const CONTEXT_CHARS: usize = 8192;
/// Characters of output in `output_preview`.
pub const PREVIEW_CHARS: usize = 200;

fn floor_boundary(s: &str, mut i: usize) -> usize {
    i = i.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn last_chars(s: &str, n: usize) -> &str {
    let count = s[..].chars().rev().take(n).map(char::len_utf8).sum::<usize>();
    &s[s.len() - count..]
}

fn first_chars(s: &str, n: usize) -> &str {
    let count = s.chars().take(n).map(char::len_utf8).sum::<usize>();
    &s[..count]
}

/// A text cut at `TEXT_MAX` bytes, redacted; sets `truncated` when cut.
fn short_text(s: &str, truncated: &mut bool) -> String {
    let red = redact::redact(s).into_owned();
    let (cut, was_cut) = redact::cut(&red, TEXT_MAX);
    *truncated |= was_cut;
    cut.to_string()
}

/// Redact every string in a JSON value and cut long ones.
fn clean_json(v: &mut Value, truncated: &mut bool) {
    redact::redact_json(v);
    cut_json(v, truncated);
}

fn cut_json(v: &mut Value, truncated: &mut bool) {
    match v {
        Value::String(s) => {
            let (c, was) = redact::cut(s, TEXT_MAX);
            if was {
                *s = c.to_string();
                *truncated = true;
            }
        }
        Value::Array(a) => a.iter_mut().for_each(|x| cut_json(x, truncated)),
        Value::Object(o) => o.values_mut().for_each(|x| cut_json(x, truncated)),
        _ => {}
    }
}

/// The fields every view shares (everything but the output).
fn base(run: &Run, truncated: &mut bool) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("run_id".into(), json!(run.run_id));
    m.insert("agent".into(), json!(run.agent));
    m.insert("profile".into(), json!(run.profile));
    m.insert("client".into(), json!(run.client));
    m.insert("status".into(), json!(run.status));
    m.insert("created_at".into(), json!(run.created_at));
    m.insert("updated_at".into(), json!(run.updated_at));
    m.insert("input_preview".into(), json!(short_text(&run.input_preview, truncated)));
    m.insert("error".into(), run.error.as_deref().map(|e| json!(short_text(e, truncated))).unwrap_or(Value::Null));
    m.insert("usage".into(), run.usage.clone().unwrap_or(Value::Null));
    let mut pending = run.pending.clone().unwrap_or(Value::Null);
    clean_json(&mut pending, truncated);
    m.insert("pending".into(), pending);
    m.insert("last_seq".into(), json!(run.last_seq));
    m
}

/// The run view with the output window starting at byte `offset`.
pub fn run_view(run: &Run, offset: i64) -> Result<Value> {
    if offset < 0 {
        return Err(Error::new(
            "bridge.invalid_offset",
            Kind::Unprocessable,
            format!("offset must be 0 or more (got {offset}); use next_offset from the previous view"),
        ));
    }
    let out = &run.output;
    let total = out.len();
    let start = floor_boundary(out, offset as usize);
    let end = floor_boundary(out, start.saturating_add(WINDOW));
    let before = last_chars(&out[..start], CONTEXT_CHARS);
    let after = first_chars(&out[end..], CONTEXT_CHARS);
    // The end of the scanned text is a live edge while the run can grow, and wherever the
    // context stops short of the stored end (a secret there is cut, not finished).
    let live = !run.finished || end + after.len() < total;
    let window = redact::redact_segments(before, &[&out[start..end]], after, live).pop().unwrap_or_default();
    let mut truncated = false;
    let mut m = base(run, &mut truncated);
    let more = end < total;
    m.insert("output".into(), json!(window));
    m.insert("output_offset".into(), json!(start));
    m.insert("output_total".into(), json!(total));
    m.insert("next_offset".into(), if more { json!(end) } else { Value::Null });
    if more {
        m.insert("more".into(), json!(format!("agent_run_status(run_id=\"{}\", offset={end})", run.run_id)));
    }
    m.insert("truncated".into(), json!(more || truncated));
    Ok(Value::Object(m))
}

/// The whole output as a caller sees it (redacted; its end a live edge while the run can
/// still grow), for fronts that hand the output over in one piece (the A2A artifact).
pub fn whole_output(run: &Run) -> String {
    redact::redact_segments("", &[&run.output], "", !run.finished).pop().unwrap_or_default()
}

/// A run's text field (its error, a question) as a caller sees it: redacted, cut at
/// [`TEXT_MAX`].
pub fn text(s: &str) -> String {
    short_text(s, &mut false)
}

/// The run's pending request (a question or an approval) as a caller sees it.
pub fn pending(run: &Run) -> Value {
    let mut p = run.pending.clone().unwrap_or(Value::Null);
    clean_json(&mut p, &mut false);
    p
}

/// The view without any output (what a live stream sends whenever the run changes).
pub fn status_view(run: &Run) -> Value {
    Value::Object(base(run, &mut false))
}

/// The list view: `output_preview` in place of `output`.
pub fn list_view(run: &Run) -> Value {
    let out = &run.output;
    let head = first_chars(out, PREVIEW_CHARS);
    let (preview, _) = redact::redact_head(out, head.len(), !run.finished);
    let mut truncated = false;
    let mut m = base(run, &mut truncated);
    m.insert("output_preview".into(), json!(preview));
    if truncated {
        m.insert("truncated".into(), json!(true));
    }
    Value::Object(m)
}

/// A page of `run`'s stored events after `since` (at most `limit`, checked by the caller)
/// as a caller sees them: `{run_id, events, last_seq}`.
pub fn events_page(store: &Store, run: &Run, since: i64, limit: i64) -> Result<Value> {
    let evs = ledger::events(store, &run.run_id, since, limit)?;
    let views = events_view(store, run, &evs)?;
    let last = views.last().and_then(|e| e["seq"].as_i64()).unwrap_or(since);
    Ok(json!({"run_id": run.run_id, "events": views, "last_seq": last}))
}

/// Events as a caller sees them: `{seq, event, …payload}`, consecutive `message.text`
/// masked as one text with stored context outside the page, other payloads redacted,
/// long texts cut.
pub fn events_view(store: &Store, run: &Run, events: &[StoredEvent]) -> Result<Vec<Value>> {
    let mut out: Vec<Value> = Vec::with_capacity(events.len());
    let mut i = 0;
    while i < events.len() {
        if events[i].event == "message.text" {
            let mut j = i;
            while j < events.len() && events[j].event == "message.text" {
                j += 1;
            }
            let group = &events[i..j];
            let before = if i == 0 {
                ledger::text_before(store, &run.run_id, group[0].seq, CONTEXT_CHARS)?
            } else {
                String::new()
            };
            let last_seq = group[group.len() - 1].seq;
            let (after, end) = if j == events.len() {
                ledger::text_after(store, &run.run_id, last_seq, CONTEXT_CHARS)?
            } else {
                (String::new(), ledger::TextEnd::Event)
            };
            // A live edge where the text may still grow or where the context was cut.
            let live = match end {
                ledger::TextEnd::Event => false,
                ledger::TextEnd::Stored => !run.finished,
                ledger::TextEnd::Cut => true,
            };
            let texts: Vec<&str> = group.iter().map(|e| e.payload["text"].as_str().unwrap_or("")).collect();
            let masked = redact::redact_segments(&before, &texts, &after, live);
            for (e, text) in group.iter().zip(masked) {
                let (cut, was) = redact::cut(&text, TEXT_MAX);
                let mut v = json!({"seq": e.seq, "event": e.event, "text": cut});
                if let Some(t) = e.payload.get("timestamp") {
                    v["timestamp"] = t.clone();
                }
                if was {
                    v["truncated"] = json!(true);
                }
                out.push(v);
            }
            i = j;
        } else {
            let e = &events[i];
            let mut payload = e.payload.clone();
            let mut truncated = false;
            clean_json(&mut payload, &mut truncated);
            let mut v = json!({"seq": e.seq, "event": e.event});
            if let Value::Object(p) = payload {
                for (k, val) in p {
                    if k != "run_id" && k != "event" && k != "seq" {
                        v[k] = val;
                    }
                }
            }
            if truncated {
                v["truncated"] = json!(true);
            }
            out.push(v);
            i += 1;
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(output: &str, finished: bool) -> Run {
        Run {
            run_id: "run_x".into(),
            agent: "hermes".into(),
            profile: "default".into(),
            client: "c".into(),
            status: if finished { ledger::RunStatus::Completed } else { ledger::RunStatus::Running },
            created_at: String::new(),
            updated_at: String::new(),
            input_preview: "in".into(),
            fingerprint: String::new(),
            idempotency_key: None,
            session_key: None,
            output: output.into(),
            error: None,
            usage: None,
            pending: None,
            last_seq: 0,
            finished,
        }
    }

    #[test]
    fn windows_never_split_a_character() {
        // 'é' is two bytes: a window boundary at 16384 would fall inside one.
        let text = format!("a{}", "é".repeat(20000));
        let r = run(&text, true);
        let mut offset = 0i64;
        let mut collected = String::new();
        let mut pages = 0;
        loop {
            let v = run_view(&r, offset).unwrap();
            let out = v["output"].as_str().unwrap();
            assert!(out.len() <= WINDOW);
            assert_eq!(v["output_offset"], offset);
            assert_eq!(v["output_total"], text.len());
            collected.push_str(out);
            pages += 1;
            match v["next_offset"].as_u64() {
                Some(n) => {
                    assert_eq!(v["truncated"], true);
                    assert!(v["more"].as_str().unwrap().contains(&format!("offset={n}")));
                    offset = n as i64;
                }
                None => {
                    assert_eq!(v["truncated"], false);
                    assert!(v.get("more").is_none());
                    break;
                }
            }
        }
        assert_eq!(collected, text);
        assert_eq!(pages, 3);
        // An offset inside a character starts at that character.
        let v = run_view(&r, 2).unwrap();
        assert_eq!(v["output_offset"], 1);
        assert_eq!(run_view(&r, -1).unwrap_err().code, "bridge.invalid_offset");
        let v = run_view(&r, 10_000_000).unwrap();
        assert_eq!(v["output"], "");
        assert!(v["next_offset"].is_null());
    }

    #[test]
    fn secret_split_across_windows_is_masked_in_both() {
        let mut text = "x".repeat(WINDOW - 10);
        text.push_str("Authorization: Bearer sk-abcdefghijklmnopqrstuvwxyz0123");
        text.push_str(&"y".repeat(100));
        let r = run(&text, true);
        let a = run_view(&r, 0).unwrap();
        let b = run_view(&r, a["next_offset"].as_i64().unwrap()).unwrap();
        let joined = format!("{}{}", a["output"].as_str().unwrap(), b["output"].as_str().unwrap());
        assert!(!joined.contains("abcdefghij"), "{}", &joined[joined.len() - 200..]);
        assert!(!joined.contains("0123"));
    }

    /// A running run's text stops inside a token: the list preview and the first window cut it
    /// too, before the token's end arrived. Neither may show the token's start.
    #[test]
    fn cut_inside_a_growing_token_shows_nothing_of_it() {
        for key in ["hal0bk_Ab1Cd2Ef3G", "hal0ak_Ab1Cd2Ef3G", "ghp_Ab1Cd2Ef3Gh4"] {
            let text = format!("{} {key}", "a ".repeat(95));
            let r = run(&text, false);
            let preview = list_view(&r)["output_preview"].as_str().unwrap().to_string();
            assert!(preview.ends_with(redact::MASK), "{preview}");
            assert!(!preview.contains(&key[..key.len().min(9)]), "{preview}");
            let text = format!("{} {key}", "x".repeat(WINDOW - 12));
            let r = run(&text, false);
            let window = run_view(&r, 0).unwrap()["output"].as_str().unwrap().to_string();
            assert!(window.ends_with(redact::MASK), "{}", &window[window.len() - 30..]);
            // Finished, the same short text is not a token and shows as it is.
            let done = run_view(&run(&text, true), 0).unwrap()["output"].as_str().unwrap().to_string();
            assert!(done.ends_with(&key[..11]), "{}", &done[done.len() - 30..]);
        }
    }

    #[test]
    fn live_edge_masks_a_growing_token() {
        let r = run("the key is hal0bk_abc", false);
        assert!(!run_view(&r, 0).unwrap()["output"].as_str().unwrap().contains("hal0bk_abc"));
        assert!(!list_view(&r)["output_preview"].as_str().unwrap().contains("hal0bk_abc"));
    }
}
