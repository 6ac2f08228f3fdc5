//! How list commands show rows to a person: a header line, columns padded to their widest
//! cell, and times both relative ("3 min ago") and exact (UTC), so a glance and a record agree.
//! Cells are expected to be made visible by the caller (agent text never reaches the
//! terminal raw).

use std::fmt;

use gatehouse_chat::render::utc_timestamp;

/// Rows under a header, printed with aligned columns; the last column is never padded.
#[derive(Debug)]
pub(crate) struct Table {
    header: Vec<String>,
    rows: Vec<Vec<String>>,
}

impl Table {
    pub(crate) fn new<const N: usize>(header: [&str; N]) -> Self {
        Self {
            header: header.iter().map(|cell| (*cell).to_owned()).collect(),
            rows: Vec::new(),
        }
    }

    pub(crate) fn row<const N: usize>(&mut self, cells: [String; N]) {
        self.rows.push(cells.into());
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }
}

impl fmt::Display for Table {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let columns = self.header.len();
        let mut widths = vec![0; columns];
        for row in std::iter::once(&self.header).chain(&self.rows) {
            for (width, cell) in widths.iter_mut().zip(row) {
                *width = (*width).max(cell.chars().count());
            }
        }
        for row in std::iter::once(&self.header).chain(&self.rows) {
            let mut line = String::new();
            for (index, cell) in row.iter().enumerate() {
                if index + 1 == columns {
                    line.push_str(cell);
                } else {
                    let pad = widths[index] - cell.chars().count();
                    line.push_str(cell);
                    line.push_str(&" ".repeat(pad + 2));
                }
            }
            writeln!(f, "{}", line.trim_end())?;
        }
        Ok(())
    }
}

/// `ms` (Unix milliseconds) as "3 min ago (2026-11-29 10:18:39 UTC)", or "in 5 min (…)" for a
/// time still to come, relative to `now_ms`.
pub(crate) fn when(ms: u64, now_ms: u64) -> String {
    let exact = utc_timestamp(ms / 1000);
    let relative = if ms <= now_ms {
        match ago(now_ms - ms) {
            Some(span) => format!("{span} ago"),
            None => "just now".to_owned(),
        }
    } else {
        format!(
            "in {}",
            ago(ms - now_ms).unwrap_or_else(|| "1 s".to_owned())
        )
    };
    format!("{relative} ({exact})")
}

/// A span in its largest whole unit; `None` under a second.
fn ago(ms: u64) -> Option<String> {
    let secs = ms / 1000;
    Some(match secs {
        0 => return None,
        1..=59 => format!("{secs} s"),
        60..=3_599 => format!("{} min", secs / 60),
        3_600..=86_399 => format!("{} h", secs / 3_600),
        _ => format!("{} d", secs / 86_400),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pads_every_column_but_the_last_under_a_header() {
        let mut table = Table::new(["ID", "STATE", "COMMAND"]);
        table.row(["a1".into(), "pending".into(), "make deploy".into()]);
        table.row(["b22".into(), "-".into(), "ls".into()]);
        assert_eq!(
            table.to_string(),
            "ID   STATE    COMMAND\na1   pending  make deploy\nb22  -        ls\n"
        );
    }

    #[test]
    fn says_when_relative_to_now_and_exactly() {
        let at = 1_795_242_061_000; // 2026-11-21 06:21:01 UTC
        assert_eq!(
            when(at, at + 180_500),
            "3 min ago (2026-11-21 06:21:01 UTC)"
        );
        assert_eq!(when(at, at + 200), "just now (2026-11-21 06:21:01 UTC)");
        assert_eq!(when(at, at - 7_200_000), "in 2 h (2026-11-21 06:21:01 UTC)");
        assert_eq!(
            when(at, at + 3 * 86_400_000),
            "3 d ago (2026-11-21 06:21:01 UTC)"
        );
    }
}
