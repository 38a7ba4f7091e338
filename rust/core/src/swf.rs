//! The Standard Workload Format's job lines, parsed from bytes into columns.
//!
//! The core opens no file: the caller reads (and decompresses) the file and feeds its
//! text in blocks of any size ([`SwfParser::feed`]); [`SwfParser::finish`] returns
//! the columns. This is the fast path of `dispatchlab.workload.swf.read_swf`, which
//! stays the reference: the parser reads a **clean** file exactly as the Python
//! reader does, and hands any other file back ([`Unclean`], with the first line it
//! could not take and why), which the Python reader then reads, with its skips, its
//! rounding and its one-line errors naming the file, line and field.
//!
//! The rules, as `read_swf` states them:
//!
//! * lines end with `\n` (a last line without one counts); a line's tokens are
//!   separated by blanks (tab, vertical tab, form feed, carriage return, space);
//!   a line without a token is blank; a line whose first token starts with `;` is a
//!   comment (kept verbatim, without its `\n`, for the header); every other line is
//!   a job line with 18 fields (more with `ignore_extra`: the extra tokens are
//!   skipped unread);
//! * a field is `[+-]digits[.digits]` of at most 18 characters (the Python reader's
//!   integer path; exponents and longer tokens take its float path, handed back
//!   here);
//! * fields 6 and 7 (average CPU time, used memory) are float64: the integer of the
//!   digits over 10^(digits after the point), the correctly rounded value; every
//!   other field is an int64 and a decimal point there must leave a whole number
//!   (`3600.00`); a fraction (an error or a rounding in the Python reader) is handed
//!   back, as is a magnitude of 2^53 or more;
//! * the values the simulation relies on: a job with processors (field 8, or field 5
//!   when field 8 is -1, above 0) and a run time (>= 0) has a submit time >= 0; a
//!   requested time is -1 or >= 0; submit, run and requested times are below the
//!   engine's time limit ([`crate::time_limit`] of 0 jobs); otherwise handed back;
//! * a file without a job line is handed back (the reader's "no jobs" error).

/// Fields of a strict SWF job line.
pub const N_FIELDS: usize = 18;
/// The float64 fields (0-based): 6 average CPU time, 7 used memory.
pub const FLOAT_FIELDS: [usize; 2] = [5, 6];
/// The longest token the integer path takes (the Python reader's rule).
pub const MAX_TOKEN: usize = 18;

const SUBMIT: usize = 1;
const RUN: usize = 3;
const ALLOC_PROCS: usize = 4;
const REQ_PROCS: usize = 7;
const REQ_TIME: usize = 8;
/// Integer magnitudes from here on are refused (not exact as float64).
const EXACT: i64 = 1 << 53;
/// 10^k, exact as f64 for every k a token of [`MAX_TOKEN`] characters can have.
const POW10: [f64; MAX_TOKEN] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17,
];

/// Why a file is handed back to the reference reader: the 1-based line and field
/// (0-based; `None` for a line-level reason) where the parser stopped, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unclean {
    /// 1-based line number (0: the file as a whole)
    pub line: u64,
    /// the 0-based field, when one is at fault
    pub field: Option<usize>,
    /// what the parser does not take there
    pub reason: &'static str,
}

impl std::fmt::Display for Unclean {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.field {
            Some(field) => write!(f, "line {} field {}: {}", self.line, field + 1, self.reason),
            None => write!(f, "line {}: {}", self.line, self.reason),
        }
    }
}

/// The columns of a clean SWF file, one value per job line in file order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SwfColumns {
    /// the 18 fields; the float fields ([`FLOAT_FIELDS`]) are empty here
    pub ints: Vec<Vec<i64>>,
    /// fields 6 and 7 (average CPU time, used memory)
    pub floats: [Vec<f64>; 2],
    /// the 1-based line of each job
    pub line: Vec<i64>,
    /// the comment lines, verbatim (without the `\n`), in file order
    pub comments: Vec<Vec<u8>>,
    /// job lines read (neither blank nor a comment)
    pub records: u64,
    /// lines read, blank and comment lines included
    pub lines: u64,
}

/// Parses an SWF text fed in blocks (see the module docs).
#[derive(Debug, Clone)]
pub struct SwfParser {
    ignore_extra: bool,
    limit: i64,
    rest: Vec<u8>,
    out: SwfColumns,
    unclean: Option<Unclean>,
    /// the expected size of the whole text (bytes; 0: unknown)
    size_hint: usize,
    /// bytes of the lines parsed so far
    bytes: usize,
}

/// Whether `b` separates tokens (C `isspace`, as `numpy.fromstring` skips).
#[inline]
fn blank(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

/// The tokens of a line, separated by blanks.
struct Tokens<'a> {
    line: &'a [u8],
    pos: usize,
}

impl<'a> Iterator for Tokens<'a> {
    type Item = &'a [u8];

    #[inline]
    fn next(&mut self) -> Option<&'a [u8]> {
        let line = self.line;
        let mut i = self.pos;
        while i < line.len() && blank(line[i]) {
            i += 1;
        }
        if i == line.len() {
            self.pos = i;
            return None;
        }
        let start = i;
        while i < line.len() && !blank(line[i]) {
            i += 1;
        }
        self.pos = i;
        Some(&line[start..i])
    }
}

/// `[+-]digits[.digits]` (at most [`MAX_TOKEN`] characters) as the integer of its
/// digits and the number of digits after the point; `None` for anything else.
#[inline]
fn number(token: &[u8]) -> Option<(i64, usize)> {
    if token.len() > MAX_TOKEN {
        return None;
    }
    let (negative, digits) = match token.first() {
        Some(b'-') => (true, &token[1..]),
        Some(b'+') => (false, &token[1..]),
        _ => (false, token),
    };
    // at most 18 digits: no overflow
    let mut value: i64 = 0;
    let mut i = 0;
    while i < digits.len() && digits[i].is_ascii_digit() {
        value = value * 10 + i64::from(digits[i] - b'0');
        i += 1;
    }
    if i == 0 {
        return None;
    }
    let mut after = 0;
    if i < digits.len() {
        if digits[i] != b'.' {
            return None;
        }
        i += 1;
        while i < digits.len() && digits[i].is_ascii_digit() {
            value = value * 10 + i64::from(digits[i] - b'0');
            i += 1;
            after += 1;
        }
        if i < digits.len() {
            return None;
        }
    }
    Some((if negative { -value } else { value }, after))
}

/// The index of the first `\n` in `text`, eight bytes at a time.
#[inline]
fn newline(text: &[u8]) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    const NL: u64 = ONES * b'\n' as u64;
    let mut chunks = text.chunks_exact(8);
    let mut at = 0;
    for chunk in &mut chunks {
        let word = u64::from_le_bytes(chunk.try_into().expect("8 bytes")) ^ NL;
        // the lowest flagged byte is the first zero byte (a newline)
        let zero = word.wrapping_sub(ONES) & !word & HIGH;
        if zero != 0 {
            return Some(at + (zero.trailing_zeros() / 8) as usize);
        }
        at += 8;
    }
    chunks
        .remainder()
        .iter()
        .position(|&b| b == b'\n')
        .map(|i| at + i)
}

impl SwfParser {
    /// A parser; `ignore_extra`: job lines may have more than 18 fields (the extra
    /// ones are skipped unread), else such a line is handed back.
    pub fn new(ignore_extra: bool) -> SwfParser {
        SwfParser::with_size_hint(ignore_extra, 0)
    }

    /// A parser for a text of about `size_hint` bytes (0: unknown, e.g. the size a
    /// gzip trailer records): the columns are sized once from the rows per byte of the
    /// first lines, so they are not grown (copied) as rows come, which keeps the peak
    /// memory near the columns' own size. The columns are the same with any hint.
    pub fn with_size_hint(ignore_extra: bool, size_hint: usize) -> SwfParser {
        SwfParser {
            ignore_extra,
            limit: crate::time_limit(0),
            rest: Vec::new(),
            out: SwfColumns {
                ints: vec![Vec::new(); N_FIELDS],
                ..SwfColumns::default()
            },
            unclean: None,
            size_hint,
            bytes: 0,
        }
    }

    /// Room for one more row in every column: when full, the columns grow to the rows
    /// the whole text is expected to hold (the rows so far scaled by the text's size
    /// over the bytes parsed, plus 2%), at least by a quarter.
    fn reserve(&mut self) {
        let out = &mut self.out;
        let (len, cap) = (out.line.len(), out.line.capacity());
        if len < cap {
            return;
        }
        let need = len + 1;
        let expected = need * self.size_hint.max(self.bytes) / self.bytes.max(1);
        let want = need.max(expected + expected / 50 + 64).max(cap + cap / 4);
        for (j, col) in out.ints.iter_mut().enumerate() {
            if !FLOAT_FIELDS.contains(&j) {
                col.reserve_exact(want - len);
            }
        }
        for col in out.floats.iter_mut() {
            col.reserve_exact(want - len);
        }
        out.line.reserve_exact(want - len);
    }

    /// Why the file is handed back, once the parser has met a line it does not take
    /// (feeding more text then does nothing).
    pub fn unclean(&self) -> Option<&Unclean> {
        self.unclean.as_ref()
    }

    /// Parse the next block of the text (any size; a line may span blocks).
    pub fn feed(&mut self, data: &[u8]) {
        if self.unclean.is_some() {
            return;
        }
        let mut start = 0;
        if !self.rest.is_empty() {
            match newline(data) {
                None => {
                    self.rest.extend_from_slice(data);
                    return;
                }
                Some(end) => {
                    let mut line = std::mem::take(&mut self.rest);
                    line.extend_from_slice(&data[..end]);
                    self.line(&line);
                    start = end + 1;
                }
            }
        }
        let mut rest = &data[start..];
        while let Some(end) = newline(rest) {
            if self.unclean.is_some() {
                return;
            }
            self.line(&rest[..end]);
            rest = &rest[end + 1..];
        }
        self.rest.extend_from_slice(rest);
    }

    /// The columns of the whole text (the last line may lack its `\n`), or why the
    /// file is handed back.
    pub fn finish(mut self) -> Result<SwfColumns, Unclean> {
        if self.unclean.is_none() && !self.rest.is_empty() {
            let line = std::mem::take(&mut self.rest);
            self.line(&line);
        }
        if let Some(why) = self.unclean {
            return Err(why);
        }
        if self.out.line.is_empty() {
            return Err(Unclean {
                line: 0,
                field: None,
                reason: "no job line",
            });
        }
        Ok(self.out)
    }

    fn refuse(&mut self, field: Option<usize>, reason: &'static str) {
        self.unclean = Some(Unclean {
            line: self.out.lines,
            field,
            reason,
        });
    }

    /// One line (without its `\n`).
    fn line(&mut self, line: &[u8]) {
        self.out.lines += 1;
        self.bytes += line.len() + 1;
        let mut tokens = Tokens { line, pos: 0 };
        let Some(first) = tokens.next() else {
            return; // blank
        };
        if first[0] == b';' {
            self.out.comments.push(line.to_vec());
            return;
        }
        self.out.records += 1;
        let mut ints = [0i64; N_FIELDS];
        let mut floats = [0f64; 2];
        let mut token = Some(first);
        for j in 0..N_FIELDS {
            let Some(tok) = token else {
                return self.refuse(Some(j), "fewer than 18 fields");
            };
            let Some((digits, after)) = number(tok) else {
                return self.refuse(Some(j), "not a plain decimal number");
            };
            if j == FLOAT_FIELDS[0] || j == FLOAT_FIELDS[1] {
                floats[j - FLOAT_FIELDS[0]] = digits as f64 / POW10[after];
            } else {
                let mut value = digits;
                if after > 0 {
                    let scale = 10i64.pow(after as u32);
                    if value.rem_euclid(scale) != 0 {
                        return self.refuse(Some(j), "a fraction in an integer field");
                    }
                    value = value.div_euclid(scale);
                }
                if value >= EXACT || value <= -EXACT {
                    return self.refuse(Some(j), "a magnitude of 2**53 or more");
                }
                ints[j] = value;
            }
            token = tokens.next();
        }
        if token.is_some() && !self.ignore_extra {
            return self.refuse(Some(N_FIELDS), "more than 18 fields");
        }
        let (submit, run, req_time) = (ints[SUBMIT], ints[RUN], ints[REQ_TIME]);
        let units = if ints[REQ_PROCS] != -1 {
            ints[REQ_PROCS]
        } else {
            ints[ALLOC_PROCS]
        };
        if submit < 0 && units > 0 && run >= 0 {
            return self.refuse(Some(SUBMIT), "no submit time for a job that ran");
        }
        if req_time < -1 {
            return self.refuse(Some(REQ_TIME), "a negative requested time");
        }
        for j in [SUBMIT, RUN, REQ_TIME] {
            if ints[j] >= self.limit {
                return self.refuse(Some(j), "a time beyond the engine's limit");
            }
        }
        self.reserve();
        for (j, value) in ints.iter().enumerate() {
            if j != FLOAT_FIELDS[0] && j != FLOAT_FIELDS[1] {
                self.out.ints[j].push(*value);
            }
        }
        self.out.floats[0].push(floats[0]);
        self.out.floats[1].push(floats[1]);
        self.out.line.push(self.out.lines as i64);
    }
}

/// Parse a whole SWF text at once (see [`SwfParser`]).
pub fn parse_swf(text: &[u8], ignore_extra: bool) -> Result<SwfColumns, Unclean> {
    let mut parser = SwfParser::new(ignore_extra);
    parser.feed(text);
    parser.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    const LINE: &str = "1 0 5 100 4 1.5 -1 4 200 -1 1 3 1 -1 1 -1 -1 -1";

    fn row(cols: &SwfColumns, i: usize) -> Vec<String> {
        (0..N_FIELDS)
            .map(|j| match j {
                5 | 6 => format!("{}", cols.floats[j - 5][i]),
                _ => cols.ints[j][i].to_string(),
            })
            .collect()
    }

    #[test]
    fn the_first_newline_at_any_place() {
        for len in 0..40 {
            for at in 0..=len {
                let mut text = vec![b'7'; len];
                if at < len {
                    text[at] = b'\n';
                    if at + 3 < len {
                        text[at + 3] = b'\n';
                    }
                }
                let found = newline(&text);
                assert_eq!(found, if at < len { Some(at) } else { None }, "{len} {at}");
            }
        }
        assert_eq!(newline(b"\x0b\x0c\r\t \x8a\xff\n"), Some(7));
    }

    #[test]
    fn comments_blank_lines_and_job_lines() {
        let text = format!("; Version: 2.2\n\n  ; MaxProcs: 4\r\n{LINE}\n \t\n{LINE}");
        let cols = parse_swf(text.as_bytes(), false).unwrap();
        assert_eq!(cols.line, vec![4, 6]);
        assert_eq!(cols.records, 2);
        assert_eq!(cols.lines, 6);
        assert_eq!(
            cols.comments,
            vec![b"; Version: 2.2".to_vec(), b"  ; MaxProcs: 4\r".to_vec()]
        );
        assert_eq!(
            row(&cols, 0)[..9],
            ["1", "0", "5", "100", "4", "1.5", "-1", "4", "200"]
        );
    }

    #[test]
    fn decimals_and_signs() {
        let text = "+1 00 5 3600.00 4 0.03 142. 4 -1 -1 1 3 1 -1 1 -1 -1 -0\n";
        let cols = parse_swf(text.as_bytes(), false).unwrap();
        assert_eq!(cols.ints[0], vec![1]);
        assert_eq!(cols.ints[3], vec![3600]);
        assert_eq!(cols.floats[0], vec![0.03]);
        assert_eq!(cols.floats[1], vec![142.0]);
        assert_eq!(cols.ints[17], vec![0]);
    }

    #[test]
    fn any_block_boundaries_give_the_same_columns() {
        let text = format!("; Note: x\n{LINE}\n\n{LINE}\r\n;c\n{LINE}");
        let whole = parse_swf(text.as_bytes(), false).unwrap();
        for size in 1..text.len() {
            let mut parser = SwfParser::new(false);
            for block in text.as_bytes().chunks(size) {
                parser.feed(block);
            }
            assert_eq!(parser.finish().unwrap(), whole, "blocks of {size}");
        }
    }

    #[test]
    fn any_size_hint_gives_the_same_columns() {
        let text = format!("; Note: x\n{LINE}\n{LINE}\n{LINE}\n").repeat(50);
        let whole = parse_swf(text.as_bytes(), false).unwrap();
        for hint in [0, 1, 100, text.len(), 10 * text.len()] {
            let mut parser = SwfParser::with_size_hint(false, hint);
            for block in text.as_bytes().chunks(333) {
                parser.feed(block);
            }
            let cols = parser.finish().unwrap();
            assert_eq!(cols, whole, "hint {hint}");
            if hint == text.len() {
                assert!(cols.line.capacity() < 150 + 3 + 64, "sized once");
            }
        }
    }

    #[test]
    fn extra_fields_only_when_ignored() {
        let text = format!("{LINE} 7 x.y\n");
        let why = parse_swf(text.as_bytes(), false).unwrap_err();
        assert_eq!((why.line, why.field), (1, Some(N_FIELDS)));
        assert_eq!(parse_swf(text.as_bytes(), true).unwrap().ints[0], vec![1]);
    }

    #[test]
    fn what_is_handed_back() {
        let cases = [
            ("1 0 5 100 4 1.5 -1 4 200", "fewer than 18 fields"),
            (
                "1 0 5 1e2 4 1.5 -1 4 200 -1 1 3 1 -1 1 -1 -1 -1",
                "not a plain decimal number",
            ),
            (
                "1 0 5 .5 4 1.5 -1 4 200 -1 1 3 1 -1 1 -1 -1 -1",
                "not a plain decimal number",
            ),
            (
                "1 0 5 1.2.3 4 1 -1 4 200 -1 1 3 1 -1 1 -1 -1 -1",
                "not a plain decimal number",
            ),
            (
                "1 0 5 1234567890123456789 4 1 -1 4 200 -1 1 3 1 -1 1 -1 -1 -1",
                "not a plain decimal number",
            ),
            (
                "1 0 5 100.5 4 1 -1 4 200 -1 1 3 1 -1 1 -1 -1 -1",
                "a fraction in an integer field",
            ),
            (
                "1.5 0 5 100 4 1 -1 4 200 -1 1 3 1 -1 1 -1 -1 -1",
                "a fraction in an integer field",
            ),
            (
                "9007199254740992 0 5 100 4 1 -1 4 200 -1 1 3 1 -1 1 -1 -1 -1",
                "a magnitude of 2**53 or more",
            ),
            (
                "1 -1 5 100 4 1 -1 4 200 -1 1 3 1 -1 1 -1 -1 -1",
                "no submit time for a job that ran",
            ),
            (
                "1 0 5 100 4 1 -1 4 -2 -1 1 3 1 -1 1 -1 -1 -1",
                "a negative requested time",
            ),
            (
                "1 4398046511104 5 100 4 1 -1 4 200 -1 1 3 1 -1 1 -1 -1 -1",
                "a time beyond the engine's limit",
            ),
            ("; only a comment", "no job line"),
        ];
        for (line, reason) in cases {
            let why = parse_swf(format!("{line}\n").as_bytes(), false).unwrap_err();
            assert_eq!(why.reason, reason, "{line}");
        }
        // a job without processors or without a run time may lack a submit time
        let ok = "1 -1 5 -1 4 1 -1 4 200 -1 1 3 1 -1 1 -1 -1 -1\n1 -1 5 100 -1 1 -1 -1 200 -1 1 3 1 -1 1 -1 -1 -1\n";
        assert_eq!(
            parse_swf(ok.as_bytes(), false).unwrap().ints[1],
            vec![-1, -1]
        );
        // nothing is read past the first line handed back
        let mut parser = SwfParser::new(false);
        parser.feed(b"x\n");
        parser.feed(LINE.as_bytes());
        assert_eq!(parser.unclean().unwrap().line, 1);
        assert_eq!(
            parser.finish().unwrap_err().to_string(),
            "line 1 field 1: not a plain decimal number"
        );
    }
}
