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

/// An event or line longer than [`MAX_EVENT_BYTES`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Oversize;

/// Incremental SSE parser (the WHATWG event-stream rules): lines end in `\r\n`, `\n` or `\r`
/// (also when split between chunks), `:` lines are comments (keep-alives), a field without a
/// colon has an empty value, one space after the colon is dropped, several `data:` lines join
/// with `\n`, a blank line dispatches (an event with no `data` is dropped), `id` and `retry`
/// are ignored, a leading BOM is skipped, and bytes that are not UTF-8 become U+FFFD.
#[derive(Debug, Default)]
pub struct SseParser {
    line: Vec<u8>,
    after_cr: bool,
    started: bool,
    event: String,
    data: String,
    has_data: bool,
}

impl SseParser {
    pub fn new() -> SseParser {
        SseParser::default()
    }

    /// Feed the next chunk; returns the events it completed.
    pub fn push(&mut self, mut chunk: &[u8]) -> std::result::Result<Vec<SseEvent>, Oversize> {
        let mut out = Vec::new();
        if !self.started {
            // Skip a BOM at the very start, even one split between chunks.
            let bom = b"\xEF\xBB\xBF";
            let have = self.line.len();
            let n = chunk.len().min(bom.len() - have);
            if chunk[..n] != bom[have..have + n] {
                self.started = true;
                let partial = std::mem::take(&mut self.line);
                self.feed(&partial, &mut out)?;
            } else if have + n == bom.len() {
                self.started = true;
                self.line.clear();
                chunk = &chunk[n..];
            } else {
                self.line.extend_from_slice(&chunk[..n]);
                return Ok(out);
            }
        }
        self.feed(chunk, &mut out)?;
        Ok(out)
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
                    self.line.extend_from_slice(&rest[..i]);
                    self.after_cr = rest[i] == b'\r';
                    rest = &rest[i + 1..];
                    let line = std::mem::take(&mut self.line);
                    self.line_done(&line, out);
                }
                None => {
                    self.line.extend_from_slice(rest);
                    rest = &[];
                }
            }
            if self.line.len() + self.data.len() > MAX_EVENT_BYTES {
                *self = SseParser { started: true, ..SseParser::default() };
                return Err(Oversize);
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
