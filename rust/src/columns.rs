//! A batch's rows as Arrow column buffers (the columnar format's layout: a validity bitmap, least
//! significant bit first, 1 for a value; 32-bit offsets; little-endian values), so that the
//! Python side builds each Arrow array with one `from_buffers` call instead of an object per
//! cell. `sitescout._table` owns the schema; this only lays out the bytes.
#![forbid(unsafe_code)]

use crate::batch::{Row, Rows};

/// Validity bitmap; None once every value was present (Arrow's "no nulls").
#[derive(Debug, Default)]
pub struct Validity {
    bits: Vec<u8>,
    nulls: usize,
    len: usize,
}

impl Validity {
    fn push(&mut self, valid: bool) {
        if self.len.is_multiple_of(8) {
            self.bits.push(0);
        }
        if valid {
            self.bits[self.len / 8] |= 1 << (self.len % 8);
        } else {
            self.nulls += 1;
        }
        self.len += 1;
    }

    pub fn into_bitmap(self) -> Option<Vec<u8>> {
        (self.nulls > 0).then_some(self.bits)
    }
}

/// A `string` column; text past 2 GiB in one batch does not fit its 32-bit offsets.
#[derive(Debug, Default)]
pub struct Strings {
    pub validity: Validity,
    pub offsets: Vec<u8>,
    pub data: Vec<u8>,
}

/// The batch's text is too big for one Arrow `string` array.
#[derive(Debug, PartialEq, Eq)]
pub struct TooBig;

impl Strings {
    fn with_capacity(rows: usize) -> Self {
        let mut column = Strings {
            offsets: Vec::with_capacity((rows + 1) * 4),
            ..Strings::default()
        };
        column.offsets.extend_from_slice(&0i32.to_le_bytes());
        column
    }

    fn push(&mut self, value: Option<&str>) -> Result<(), TooBig> {
        self.validity.push(value.is_some());
        self.data.extend_from_slice(value.unwrap_or("").as_bytes());
        let end = i32::try_from(self.data.len()).map_err(|_| TooBig)?;
        self.offsets.extend_from_slice(&end.to_le_bytes());
        Ok(())
    }

    fn of<'a>(rows: &'a [Row], value: impl Fn(&'a Row) -> Option<&'a str>) -> Result<Self, TooBig> {
        let mut column = Strings::with_capacity(rows.len());
        for row in rows {
            column.push(value(row))?;
        }
        Ok(column)
    }
}

/// A `float64` column.
#[derive(Debug, Default)]
pub struct Floats {
    pub validity: Validity,
    pub values: Vec<u8>,
}

/// A `list<string>` column.
#[derive(Debug)]
pub struct StringLists {
    pub validity: Validity,
    pub offsets: Vec<u8>,
    pub items: Strings,
}

/// The columns `sitescout._table.schema` takes from the rows, in its order (`lastmod`, which
/// is computed from `lastmod_raw`, apart).
#[derive(Debug)]
pub struct Columns {
    pub url: Strings,
    pub lastmod_raw: Strings,
    pub priority: Floats,
    pub changefreq: Strings,
    pub hreflang: Strings,
    pub alternate_of: Strings,
    pub sitemap: Strings,
    /// `int32`, never null.
    pub depth: Vec<u8>,
    pub source: Strings,
    pub title: Strings,
    pub md_url: Strings,
    /// Null where a row has no merged sources.
    pub sources: StringLists,
}

pub fn columns(rows: &Rows) -> Result<Columns, TooBig> {
    let rows = rows.0.as_slice();
    let mut priority = Floats {
        values: Vec::with_capacity(rows.len() * 8),
        ..Floats::default()
    };
    let mut depth = Vec::with_capacity(rows.len() * 4);
    let mut sources = StringLists {
        validity: Validity::default(),
        offsets: Vec::with_capacity((rows.len() + 1) * 4),
        items: Strings::with_capacity(0),
    };
    sources.offsets.extend_from_slice(&0i32.to_le_bytes());
    let mut listed = 0i32;
    for row in rows {
        priority.validity.push(row.entry.priority.is_some());
        priority
            .values
            .extend_from_slice(&row.entry.priority.unwrap_or(0.0).to_le_bytes());
        // Depth is a nesting level, far below i32::MAX; saturate rather than wrap.
        depth.extend_from_slice(&i32::try_from(row.depth).unwrap_or(i32::MAX).to_le_bytes());
        let merged = row.sources();
        sources.validity.push(!merged.is_empty());
        for source in merged {
            sources.items.push(Some(source.as_str()))?;
            listed += 1;
        }
        sources.offsets.extend_from_slice(&listed.to_le_bytes());
    }
    Ok(Columns {
        url: Strings::of(rows, |r| Some(r.entry.url.as_str()))?,
        lastmod_raw: Strings::of(rows, |r| r.entry.lastmod.as_deref())?,
        priority,
        changefreq: Strings::of(rows, |r| r.entry.changefreq.as_deref())?,
        hreflang: Strings::of(rows, |r| r.hreflang())?,
        alternate_of: Strings::of(rows, |r| r.alternate_of())?,
        sitemap: Strings::of(rows, |r| Some(&*r.sitemap))?,
        depth,
        source: Strings::of(rows, |r| Some(r.source.as_str()))?,
        title: Strings::of(rows, Row::title)?,
        md_url: Strings::of(rows, Row::md_url)?,
        sources,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validity_is_least_significant_bit_first_and_none_without_nulls() {
        let mut all = Validity::default();
        (0..9).for_each(|_| all.push(true));
        assert_eq!(all.into_bitmap(), None);
        let mut some = Validity::default();
        for valid in [true, false, true, true, true, true, true, true, false, true] {
            some.push(valid);
        }
        assert_eq!(some.into_bitmap(), Some(vec![0b1111_1101, 0b0000_0010]));
    }

    #[test]
    fn strings_lay_out_offsets_and_data() {
        let mut column = Strings::with_capacity(3);
        for value in [Some("ab"), None, Some("é")] {
            column.push(value).unwrap();
        }
        let offsets: Vec<i32> = column
            .offsets
            .chunks(4)
            .map(|c| i32::from_le_bytes(c.try_into().unwrap()))
            .collect();
        assert_eq!(offsets, [0, 2, 2, 4]);
        assert_eq!(column.data, "abé".as_bytes());
        assert_eq!(column.validity.into_bitmap(), Some(vec![0b101]));
    }
}
