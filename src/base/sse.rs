//! Incremental parsing of `text/event-stream` bodies, shared by every SSE reader in hal0
//! (the Hermes run event stream, the legacy HTTP+SSE MCP client): chunk in, complete events
//! out, whatever the line endings and however the chunks split.

/// The largest single SSE event (or line) accepted; a bigger one closes the stream.
pub const MAX_EVENT_BYTES: usize = 16 * 1024 * 1024;

/// One dispatched SSE event: its type (`message` when the server names none) and its data
/// (the `data:` lines joined with `\n`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseEvent {
    pub event: String,
    pub data: String,
}

/// An event or line longer than the parser's limit ([`MAX_EVENT_BYTES`] by default). It
/// holds the events the same chunk completed before the limit was crossed, so what a reader
/// gets does not depend on how the stream was cut into chunks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Oversize {
    pub before: Vec<SseEvent>,
}

/// Incremental SSE parser (the WHATWG event-stream rules): lines end in `\r\n`, `\n` or `\r`
/// (also when split between chunks), `:` lines are comments (keep-alives), a field without a
/// colon has an empty value, one space after the colon is dropped, several `data:` lines join
/// with `\n`, a blank line dispatches (an event with no `data` is dropped), `id` and `retry`
/// are ignored, a leading BOM is skipped, and bytes that are not UTF-8 become U+FFFD.
///
/// The limit: a line (as received, field name included) plus the data the event holds
/// before it, and the event's data, may not exceed the parser's limit. It is checked where a
/// line ends and before a chunk's bytes are buffered, so the same bytes give the same events
/// and the same [`Oversize`] however they are chunked, and the buffer never passes it.
#[derive(Debug)]
pub struct SseParser {
    line: Vec<u8>,
    after_cr: bool,
    started: bool,
    /// How many bytes of a leading BOM were seen before the first other byte.
    bom: usize,
    event: String,
    data: String,
    has_data: bool,
    limit: usize,
}

impl Default for SseParser {
    fn default() -> Self {
        SseParser::with_limit(MAX_EVENT_BYTES)
    }
}

impl SseParser {
    pub fn new() -> SseParser {
        SseParser::default()
    }

    /// A parser whose events and lines may be at most `limit` bytes.
    pub fn with_limit(limit: usize) -> SseParser {
        SseParser {
            line: Vec::new(),
            after_cr: false,
            started: false,
            bom: 0,
            event: String::new(),
            data: String::new(),
            has_data: false,
            limit,
        }
    }

    /// Past the limit: the event or line in progress is dropped and the parser starts over.
    fn oversize(&mut self, before: &mut Vec<SseEvent>) -> Oversize {
        *self = SseParser { started: true, ..SseParser::with_limit(self.limit) };
        Oversize { before: std::mem::take(before) }
    }

    /// Feed the next chunk; returns the events it completed.
    pub fn push(&mut self, mut chunk: &[u8]) -> std::result::Result<Vec<SseEvent>, Oversize> {
        let mut out = Vec::new();
        if !self.started {
            // Skip a BOM at the very start, even one split between chunks.
            const BOM: &[u8] = b"\xEF\xBB\xBF";
            let have = self.bom;
            let n = chunk.len().min(BOM.len() - have);
            if chunk[..n] != BOM[have..have + n] {
                self.started = true;
                self.feed(&BOM[..have], &mut out)?;
            } else if have + n == BOM.len() {
                self.started = true;
                chunk = &chunk[n..];
            } else {
                self.bom += n;
                return Ok(out);
            }
        }
        self.feed(chunk, &mut out)?;
        Ok(out)
    }

    /// Would the line in progress, with `more` bytes still to come in this chunk, pass the
    /// limit? Checked before the bytes are buffered, so a chunk never grows the buffer past it.
    fn over(&self, more: usize) -> bool {
        self.line.len().saturating_add(more).saturating_add(self.data.len()) > self.limit
    }

    fn feed(&mut self, chunk: &[u8], out: &mut Vec<SseEvent>) -> std::result::Result<(), Oversize> {
        let mut rest = chunk;
        while !rest.is_empty() {
            if self.after_cr {
                self.after_cr = false;
                if rest[0] == b'\n' {
                    rest = &rest[1..];
                    continue;
                }
            }
            match rest.iter().position(|&b| b == b'\n' || b == b'\r') {
                Some(i) => {
                    if self.over(i) {
                        return Err(self.oversize(out));
                    }
                    self.line.extend_from_slice(&rest[..i]);
                    self.after_cr = rest[i] == b'\r';
                    rest = &rest[i + 1..];
                    let line = std::mem::take(&mut self.line);
                    self.line_done(&line, out);
                    // Bytes that are not UTF-8 grow as they become U+FFFD.
                    if self.data.len() > self.limit {
                        return Err(self.oversize(out));
                    }
                }
                None => {
                    if self.over(rest.len()) {
                        return Err(self.oversize(out));
                    }
                    self.line.extend_from_slice(rest);
                    rest = &[];
                }
            }
        }
        Ok(())
    }

    fn line_done(&mut self, line: &[u8], out: &mut Vec<SseEvent>) {
        if line.is_empty() {
            let event = std::mem::take(&mut self.event);
            let data = std::mem::take(&mut self.data);
            if std::mem::take(&mut self.has_data) {
                out.push(SseEvent { event: if event.is_empty() { "message".into() } else { event }, data });
            }
            return;
        }
        if line[0] == b':' {
            return;
        }
        let (field, value) = match line.iter().position(|&b| b == b':') {
            Some(i) => {
                let v = &line[i + 1..];
                (&line[..i], v.strip_prefix(b" ").unwrap_or(v))
            }
            None => (line, &b""[..]),
        };
        match field {
            b"event" => self.event = String::from_utf8_lossy(value).into_owned(),
            b"data" => {
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(&String::from_utf8_lossy(value));
                self.has_data = true;
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Feed `chunks` until the end or the first [`Oversize`]: every event handed out (those
    /// before an oversize one included) and whether the limit was hit.
    fn run(limit: usize, chunks: &[&[u8]]) -> (Vec<SseEvent>, bool) {
        let mut p = SseParser::with_limit(limit);
        let mut out = Vec::new();
        for c in chunks {
            match p.push(c) {
                Ok(evs) => out.extend(evs),
                Err(o) => {
                    out.extend(o.before);
                    return (out, true);
                }
            }
            assert!(p.line.len() <= limit, "the line buffer passed the limit");
        }
        (out, false)
    }

    /// The WHATWG rules written plainly, for the whole stream at once (no limit).
    fn reference(bytes: &[u8]) -> Vec<SseEvent> {
        let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
        let mut lines = Vec::new();
        let (mut start, mut i) = (0, 0);
        while i < bytes.len() {
            match bytes[i] {
                b'\r' if bytes.get(i + 1) == Some(&b'\n') => {
                    lines.push(&bytes[start..i]);
                    i += 2;
                    start = i;
                }
                b'\r' | b'\n' => {
                    lines.push(&bytes[start..i]);
                    i += 1;
                    start = i;
                }
                _ => i += 1,
            }
        }
        let (mut out, mut event, mut data): (Vec<SseEvent>, String, Option<String>) = (Vec::new(), String::new(), None);
        for line in lines {
            if line.is_empty() {
                if let Some(d) = data.take() {
                    let e = if event.is_empty() { "message".to_string() } else { event.clone() };
                    out.push(SseEvent { event: e, data: d });
                }
                event.clear();
                continue;
            }
            if line[0] == b':' {
                continue;
            }
            let (field, value) = match line.iter().position(|&b| b == b':') {
                Some(i) => (&line[..i], line[i + 1..].strip_prefix(b" ").unwrap_or(&line[i + 1..])),
                None => (line, &b""[..]),
            };
            let value = String::from_utf8_lossy(value);
            match field {
                b"event" => event = value.into_owned(),
                b"data" => match &mut data {
                    Some(d) => {
                        d.push('\n');
                        d.push_str(&value);
                    }
                    None => data = Some(value.into_owned()),
                },
                _ => {}
            }
        }
        out
    }

    /// SSE-shaped bytes: fields, comments, every line ending, blank lines, a BOM, and bytes
    /// that are not UTF-8.
    fn stream() -> impl Strategy<Value = Vec<u8>> {
        let piece = prop_oneof![
            4 => Just(b"data: ".to_vec()),
            2 => Just(b"data:".to_vec()),
            2 => Just(b"event: ".to_vec()),
            1 => Just(b"event".to_vec()),
            1 => Just(b": ping".to_vec()),
            1 => Just(b"id: 7".to_vec()),
            4 => Just(b"\n".to_vec()),
            2 => Just(b"\r\n".to_vec()),
            2 => Just(b"\r".to_vec()),
            1 => Just(b"\xEF\xBB\xBF".to_vec()),
            1 => Just(b"\xFF\xC3".to_vec()),
            4 => proptest::collection::vec(any::<u8>(), 0..12),
            4 => "[a-z {}\":,]{0,24}".prop_map(String::into_bytes),
        ];
        proptest::collection::vec(piece, 0..40).prop_map(|v| v.concat())
    }

    /// Cut `bytes` at the given points (taken modulo its length).
    fn cut<'a>(bytes: &'a [u8], points: &[usize]) -> Vec<&'a [u8]> {
        let mut at: Vec<usize> =
            points.iter().map(|p| if bytes.is_empty() { 0 } else { p % (bytes.len() + 1) }).collect();
        at.push(0);
        at.push(bytes.len());
        at.sort_unstable();
        at.windows(2).map(|w| &bytes[w[0]..w[1]]).collect()
    }

    proptest! {
        #![proptest_config(crate::base::prop::config(512))]

        /// However the stream is chunked, the parser gives what the plain rules give.
        #[test]
        fn chunking_does_not_matter(bytes in stream(), points in proptest::collection::vec(any::<usize>(), 0..24)) {
            let whole = run(usize::MAX, &[&bytes]);
            prop_assert_eq!(&whole, &(reference(&bytes), false));
            prop_assert_eq!(run(usize::MAX, &cut(&bytes, &points)), whole.clone());
            let ones: Vec<&[u8]> = bytes.chunks(1).collect();
            prop_assert_eq!(run(usize::MAX, &ones), whole);
        }

        /// With a small limit: the same events and the same oversize point for every
        /// chunking, no event above the limit, and below it the plain rules' events.
        #[test]
        fn the_limit_holds_for_every_chunking(
            bytes in stream(),
            points in proptest::collection::vec(any::<usize>(), 0..24),
            limit in 0usize..96,
        ) {
            let whole = run(limit, &[&bytes]);
            prop_assert_eq!(run(limit, &cut(&bytes, &points)), whole.clone());
            let ones: Vec<&[u8]> = bytes.chunks(1).collect();
            prop_assert_eq!(run(limit, &ones), whole.clone());
            for e in &whole.0 {
                prop_assert!(e.data.len() <= limit, "{} bytes of data over a limit of {limit}", e.data.len());
            }
            let plain = reference(&bytes);
            if whole.1 {
                prop_assert!(plain.starts_with(&whole.0), "the events before the oversize one are the plain rules' first");
            } else {
                prop_assert_eq!(whole.0, plain);
            }
        }

        /// Arbitrary bytes in arbitrary chunks: no panic.
        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..512), points in proptest::collection::vec(any::<usize>(), 0..16), limit in 0usize..1024) {
            let _ = run(limit, &cut(&bytes, &points));
        }
    }

    #[test]
    fn a_long_event_line_is_over_the_limit_in_one_chunk_too() {
        // Before the limit counted the line as received, a long `event:` line (or comment)
        // passed in one chunk but was refused when split; now both refuse it.
        let bytes = format!("event: {}\ndata: x\n\n", "e".repeat(100)).into_bytes();
        assert_eq!(run(64, &[&bytes]), (vec![], true));
        assert_eq!(run(64, &bytes.chunks(10).collect::<Vec<_>>()), (vec![], true));
        // Events completed before the oversize one in the same chunk are handed out.
        let bytes = format!("data: a\n\ndata: {}\n\n", "x".repeat(100)).into_bytes();
        let a = SseEvent { event: "message".into(), data: "a".into() };
        assert_eq!(run(64, &[&bytes]), (vec![a.clone()], true));
        assert_eq!(run(64, &bytes.chunks(3).collect::<Vec<_>>()), (vec![a], true));
    }
}
