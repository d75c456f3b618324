//! The shipped fonts, and measuring and wrapping text with them.
//!
//! Text is set in DejaVu Sans (Bitstream Vera licence, `fonts/LICENSE-DejaVu.txt`): the
//! regular face below weight 600, the bold face from 600 up.

use ab_glyph::{Font, FontRef, GlyphId, PxScale, ScaleFont};

use crate::error::RenderError;
use crate::widget::Style;

const REGULAR: &[u8] = include_bytes!("../fonts/DejaVuSans.ttf");
const BOLD: &[u8] = include_bytes!("../fonts/DejaVuSans-Bold.ttf");

/// Font size when a style sets none, as in Flutter.
pub const DEFAULT_SIZE: f32 = 14.0;
/// Text colour when a style sets none (Material's `black87`).
pub const DEFAULT_COLOR: u32 = 0xDD00_0000;

/// The two faces, parsed (a cheap view over the embedded bytes).
pub struct Fonts {
    regular: FontRef<'static>,
    bold: FontRef<'static>,
}

impl Fonts {
    /// Parses the embedded faces.
    pub fn load() -> Result<Self, RenderError> {
        Ok(Self {
            regular: FontRef::try_from_slice(REGULAR).map_err(|_| RenderError::Font)?,
            bold: FontRef::try_from_slice(BOLD).map_err(|_| RenderError::Font)?,
        })
    }

    /// The face for a style.
    pub fn face(&self, style: &Style) -> &FontRef<'static> {
        if style.weight.unwrap_or(400) >= 600 {
            &self.bold
        } else {
            &self.regular
        }
    }

    /// Width of `text` at `size` in the face of `style`, kerning included.
    pub fn width(&self, text: &str, style: &Style, size: f32) -> f32 {
        let font = self.face(style).as_scaled(PxScale::from(size));
        let mut width = 0.0;
        let mut prev = None;
        for c in text.chars() {
            let id = font.glyph_id(c);
            if let Some(p) = prev {
                width += font.kern(p, id);
            }
            width += font.h_advance(id);
            prev = Some(id);
        }
        width
    }

    /// Height of one line at `size`: ascent, descent and line gap.
    pub fn line_height(&self, style: &Style, size: f32) -> f32 {
        let font = self.face(style).as_scaled(PxScale::from(size));
        font.ascent() - font.descent() + font.line_gap()
    }

    /// Splits `text` into lines no wider than `max_width`: at spaces, at explicit line
    /// breaks, and inside a word only when the word alone is too wide.
    ///
    /// Linear in the text: each line's width is carried along and extended glyph by glyph,
    /// adding kerning and advances in the order [`width`](Self::width) does, so a line is
    /// measured exactly as it would be whole.
    pub fn wrap(&self, text: &str, style: &Style, size: f32, max_width: f32) -> Vec<String> {
        let font = self.face(style).as_scaled(PxScale::from(size));
        // The width of a run extended by `c`: kerning with the run's last glyph, then `c`'s
        // advance.
        let extend = |(width, prev): (f32, Option<GlyphId>), c: char| {
            let id = font.glyph_id(c);
            let kerned = match prev {
                Some(p) => width + font.kern(p, id),
                None => width,
            };
            (kerned + font.h_advance(id), Some(id))
        };
        let mut lines = Vec::new();
        for paragraph in text.split('\n') {
            let mut line = String::new();
            let mut line_chars = 0usize;
            let mut measured: (f32, Option<GlyphId>) = (0.0, None);
            for word in paragraph.split(' ') {
                let start = if line.is_empty() {
                    (0.0, None)
                } else {
                    extend(measured, ' ')
                };
                let candidate = word.chars().fold(start, extend);
                if candidate.0 <= max_width {
                    if !line.is_empty() {
                        line.push(' ');
                        line_chars += 1;
                    }
                    line.push_str(word);
                    line_chars += word.chars().count();
                    measured = candidate;
                    continue;
                }
                if !line.is_empty() {
                    lines.push(std::mem::take(&mut line));
                    line_chars = 0;
                    measured = (0.0, None);
                }
                for c in word.chars() {
                    let longer = extend(measured, c);
                    if longer.0 > max_width && line_chars >= 1 {
                        lines.push(std::mem::take(&mut line));
                        measured = extend((0.0, None), c);
                        line_chars = 0;
                    } else {
                        measured = longer;
                    }
                    line.push(c);
                    line_chars += 1;
                }
            }
            lines.push(line);
        }
        lines
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wraps_at_spaces_and_inside_long_words() {
        let fonts = Fonts::load().expect("shipped fonts");
        let style = Style::default();
        let one = fonts.width("Spring", &style, 20.0);
        assert!(one > 40.0 && one < 90.0, "{one}");
        let lines = fonts.wrap("Spring sale today", &style, 20.0, one + 1.0);
        assert_eq!(lines, vec!["Spring", "sale", "today"]);
        let long = fonts.wrap("Supercalifragilistic", &style, 20.0, one);
        assert!(long.len() > 1);
        assert!(long.iter().all(|l| fonts.width(l, &style, 20.0) <= one));
        assert_eq!(fonts.wrap("a\nb", &style, 20.0, 1000.0), vec!["a", "b"]);
        assert!(
            fonts.width(
                "Bold",
                &Style {
                    weight: Some(700),
                    ..style
                },
                20.0
            ) > fonts.width("Bold", &style, 20.0)
        );
    }
}
