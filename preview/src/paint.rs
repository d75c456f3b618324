//! Rasterising a laid-out page with `tiny-skia` and encoding it as PNG.
//!
//! Everything is drawn in logical pixels under one scale transform (the screen's device
//! pixel ratio), except glyphs, whose outlines are placed at physical size so text stays
//! sharp. A glyph is filled as a path straight onto the canvas, clipped to it by
//! `tiny-skia`: however large the font, no buffer the size of the glyph is ever made, and a
//! glyph wholly off the canvas is skipped. The art of the items the page draws is decoded
//! once per render (PNG or JPEG), its decoded size charged to the [`Meter`] before it is
//! decoded, and scaled with bicubic filtering, filling only where it shows in its box.

use std::collections::BTreeSet;

use ab_glyph::{Font, OutlineCurve, PxScale, ScaleFont};
use offer_domain::template::widgets::BoxFit;
use tiny_skia::{
    FillRule, FilterQuality, IntSize, Paint as SkPaint, Path, PathBuilder, Pattern, Pixmap, Rect,
    SpreadMode, Transform,
};

use crate::BoundItem;
use crate::budget::Meter;
use crate::error::RenderError;
use crate::layout::{Laid, Paint};
use crate::screen::Screen;
use crate::text::Fonts;
use crate::widget::Style;

/// Page background under everything (a `Scaffold` paints its own).
const BACKGROUND: u32 = 0xFFFF_FFFF;
/// Colour of the placeholder drawn for an item without art.
const PLACEHOLDER: u32 = 0xFFBD_BDBD;
/// Bezier handle length of a quarter circle, as a fraction of the radius.
const KAPPA: f32 = 0.552_284_8;
/// Bytes per pixel of the canvas (premultiplied RGBA).
const RGBA: u64 = 4;
/// Bytes per pixel the PNG encoding takes: a demultiplied copy of the canvas, and at most
/// as much again for the compressed output.
const ENCODING: u64 = 8;
/// Bytes per pixel while art is decoded: the decoder's buffer and the premultiplied copy.
const DECODING: u64 = 8;

/// Paints `laid` on a `screen`-sized image and encodes it as PNG, under `meter`.
pub fn paint(
    laid: &Laid,
    items: &[BoundItem],
    fonts: &Fonts,
    screen: Screen,
    meter: &Meter,
) -> Result<Vec<u8>, RenderError> {
    meter.canvas(screen.width, screen.height, RGBA, "the canvas")?;
    let mut pixmap = Pixmap::new(screen.width, screen.height).ok_or(RenderError::BadScreen {
        width: screen.width,
        height: screen.height,
    })?;
    pixmap.fill(color(BACKGROUND));
    let art = decode_drawn(laid, items, meter)?;
    let painter = Painter {
        fonts,
        art: &art,
        scale: screen.scale,
        meter,
    };
    painter.draw(&mut pixmap, laid, (0.0, 0.0))?;
    meter.canvas(screen.width, screen.height, ENCODING, "the PNG encoding")?;
    pixmap
        .encode_png()
        .map_err(|e| RenderError::Encode(e.to_string()))
}

/// The art of each bound item the page draws, decoded; `None` for the others and for art
/// that cannot be read.
fn decode_drawn(
    laid: &Laid,
    items: &[BoundItem],
    meter: &Meter,
) -> Result<Vec<Option<Pixmap>>, RenderError> {
    let mut drawn = BTreeSet::new();
    let mut stack = vec![laid];
    while let Some(l) = stack.pop() {
        if let Paint::Image { item: Some(i), .. } = l.paint {
            drawn.insert(i);
        }
        stack.extend(l.children.iter().map(|(_, c)| c));
    }
    let mut art: Vec<Option<Pixmap>> = items.iter().map(|_| None).collect();
    for i in drawn {
        let (Some(slot), Some(bytes)) = (
            art.get_mut(i),
            items.get(i).and_then(|it| it.art.as_deref()),
        ) else {
            continue;
        };
        *slot = decode(bytes, meter)?;
    }
    Ok(art)
}

/// Decodes PNG or JPEG art into a premultiplied pixmap, its decoded size charged first;
/// `None` when it cannot be read.
fn decode(bytes: &[u8], meter: &Meter) -> Result<Option<Pixmap>, RenderError> {
    let reader = || {
        image::ImageReader::new(std::io::Cursor::new(bytes))
            .with_guessed_format()
            .ok()
    };
    let Some((w, h)) = reader().and_then(|r| r.into_dimensions().ok()) else {
        return Ok(None);
    };
    let pixels = u64::from(w).checked_mul(u64::from(h));
    meter.alloc(pixels.and_then(|p| p.checked_mul(DECODING)), "the item art")?;
    let Some(decoded) = reader().and_then(|r| r.decode().ok()) else {
        return Ok(None);
    };
    let rgba = decoded.into_rgba8();
    let (w, h) = rgba.dimensions();
    let mut data = rgba.into_raw();
    for px in data.chunks_exact_mut(4) {
        let a = u16::from(px[3]);
        for c in &mut px[..3] {
            *c = ((u16::from(*c) * a + 127) / 255) as u8;
        }
    }
    Ok(IntSize::from_wh(w, h).and_then(|size| Pixmap::from_vec(data, size)))
}

/// A tiny-skia colour from `0xAARRGGBB`.
fn color(argb: u32) -> tiny_skia::Color {
    let [a, r, g, b] = argb.to_be_bytes();
    tiny_skia::Color::from_rgba8(r, g, b, a)
}

/// A rectangle path with quarter-circle corners of `radius` (clamped to half the shorter
/// side).
fn rounded_rect(x: f32, y: f32, w: f32, h: f32, radius: f32) -> Option<Path> {
    let r = radius.min(w / 2.0).min(h / 2.0).max(0.0);
    if r <= 0.0 {
        return Some(PathBuilder::from_rect(Rect::from_xywh(x, y, w, h)?));
    }
    let k = r * KAPPA;
    let (x1, y1) = (x + w, y + h);
    let mut pb = PathBuilder::new();
    pb.move_to(x + r, y);
    pb.line_to(x1 - r, y);
    pb.cubic_to(x1 - r + k, y, x1, y + r - k, x1, y + r);
    pb.line_to(x1, y1 - r);
    pb.cubic_to(x1, y1 - r + k, x1 - r + k, y1, x1 - r, y1);
    pb.line_to(x + r, y1);
    pb.cubic_to(x + r - k, y1, x, y1 - r + k, x, y1 - r);
    pb.line_to(x, y + r);
    pb.cubic_to(x, y + r - k, x + r - k, y, x + r, y);
    pb.close();
    pb.finish()
}

struct Painter<'a> {
    fonts: &'a Fonts,
    art: &'a [Option<Pixmap>],
    scale: f32,
    meter: &'a Meter,
}

impl Painter<'_> {
    fn draw(&self, pixmap: &mut Pixmap, laid: &Laid, at: (f32, f32)) -> Result<(), RenderError> {
        self.meter.tick()?;
        let (w, h) = laid.size;
        match &laid.paint {
            Paint::None => {}
            Paint::Rect { color: c, radius } => self.fill(pixmap, at, (w, h), *radius, *c),
            Paint::Text {
                lines,
                size,
                style,
                line_height,
            } => {
                for (i, (x, line)) in lines.iter().enumerate() {
                    let top = at.1 + *line_height * i as f32;
                    self.text(pixmap, (at.0 + x, top), line, *size, style)?;
                }
            }
            Paint::Image { item, fit } => {
                match item.and_then(|i| self.art.get(i)).and_then(Option::as_ref) {
                    Some(art) => self.image(pixmap, art, at, (w, h), *fit),
                    None => self.fill(pixmap, at, (w, h), 8.0, PLACEHOLDER),
                }
            }
        }
        for ((dx, dy), child) in &laid.children {
            self.draw(pixmap, child, (at.0 + dx, at.1 + dy))?;
        }
        Ok(())
    }

    fn fill(&self, pixmap: &mut Pixmap, at: (f32, f32), size: (f32, f32), radius: f32, argb: u32) {
        if argb >> 24 == 0 {
            return;
        }
        let Some(path) = rounded_rect(at.0, at.1, size.0, size.1, radius) else {
            return;
        };
        let mut paint = SkPaint::default();
        paint.set_color(color(argb));
        paint.anti_alias = true;
        pixmap.fill_path(
            &path,
            &paint,
            FillRule::Winding,
            Transform::from_scale(self.scale, self.scale),
            None,
        );
    }

    /// Item art scaled into its box by `fit`; only the part inside the box is filled (the
    /// art is the fill's pattern), so `cover` needs no clip mask.
    fn image(
        &self,
        pixmap: &mut Pixmap,
        art: &Pixmap,
        at: (f32, f32),
        size: (f32, f32),
        fit: BoxFit,
    ) {
        let (iw, ih) = (art.width() as f32, art.height() as f32);
        let (sx, sy) = match fit {
            BoxFit::Fill => (size.0 / iw, size.1 / ih),
            BoxFit::Contain => {
                let s = (size.0 / iw).min(size.1 / ih);
                (s, s)
            }
            BoxFit::Cover => {
                let s = (size.0 / iw).max(size.1 / ih);
                (s, s)
            }
        };
        let (dw, dh) = (iw * sx, ih * sy);
        let ox = at.0 + (size.0 - dw) / 2.0;
        let oy = at.1 + (size.1 - dh) / 2.0;
        let shown = Rect::from_ltrb(
            ox.max(at.0),
            oy.max(at.1),
            (ox + dw).min(at.0 + size.0),
            (oy + dh).min(at.1 + size.1),
        );
        let Some(shown) = shown else {
            return;
        };
        let paint = SkPaint {
            shader: Pattern::new(
                art.as_ref(),
                SpreadMode::Pad,
                FilterQuality::Bicubic,
                1.0,
                Transform::from_row(sx, 0.0, 0.0, sy, ox, oy),
            ),
            ..SkPaint::default()
        };
        pixmap.fill_rect(
            shown,
            &paint,
            Transform::from_scale(self.scale, self.scale),
            None,
        );
    }

    /// One line of text, its top-left at `at` (logical pixels): each glyph's outline filled
    /// as a path, clipped to the canvas.
    fn text(
        &self,
        pixmap: &mut Pixmap,
        at: (f32, f32),
        line: &str,
        size: f32,
        style: &Style,
    ) -> Result<(), RenderError> {
        let px = size * self.scale;
        let face = self.fonts.face(style);
        let font = face.as_scaled(PxScale::from(px));
        let factor = (font.h_scale_factor(), font.v_scale_factor());
        let mut paint = SkPaint::default();
        paint.set_color(color(style.color.unwrap_or(crate::text::DEFAULT_COLOR)));
        paint.anti_alias = true;
        let (width, height) = (pixmap.width() as f32, pixmap.height() as f32);
        let mut x = at.0 * self.scale;
        let baseline = at.1 * self.scale + font.ascent();
        let mut prev = None;
        for c in line.chars() {
            self.meter.tick()?;
            let id = font.glyph_id(c);
            if let Some(p) = prev {
                x += font.kern(p, id);
            }
            let origin = (x, baseline);
            x += font.h_advance(id);
            prev = Some(id);
            let Some(outline) = face.outline(id) else {
                continue;
            };
            let b = outline.bounds;
            let (left, right) = (origin.0 + b.min.x * factor.0, origin.0 + b.max.x * factor.0);
            let (top, bottom) = (origin.1 - b.max.y * factor.1, origin.1 - b.min.y * factor.1);
            // Not `<`: a NaN position is off the canvas too.
            let visible = right > 0.0 && left < width && bottom > 0.0 && top < height;
            if !visible {
                continue;
            }
            if let Some(path) = glyph_path(&outline.curves, origin, factor) {
                pixmap.fill_path(
                    &path,
                    &paint,
                    FillRule::Winding,
                    Transform::identity(),
                    None,
                );
            }
        }
        Ok(())
    }
}

/// A glyph's outline (font units, y up) as a path in canvas pixels, its origin at `origin`
/// and scaled by `factor` (horizontal, vertical).
fn glyph_path(curves: &[OutlineCurve], origin: (f32, f32), factor: (f32, f32)) -> Option<Path> {
    let at = |p: ab_glyph::Point| (origin.0 + p.x * factor.0, origin.1 - p.y * factor.1);
    let mut pb = PathBuilder::new();
    let mut last = None;
    for curve in curves {
        let start = match curve {
            OutlineCurve::Line(p, _) | OutlineCurve::Quad(p, _, _) | OutlineCurve::Cubic(p, ..) => {
                *p
            }
        };
        if last != Some(start) {
            let (x, y) = at(start);
            pb.move_to(x, y);
        }
        last = Some(match curve {
            OutlineCurve::Line(_, p1) => {
                let (x, y) = at(*p1);
                pb.line_to(x, y);
                *p1
            }
            OutlineCurve::Quad(_, p1, p2) => {
                let ((x1, y1), (x, y)) = (at(*p1), at(*p2));
                pb.quad_to(x1, y1, x, y);
                *p2
            }
            OutlineCurve::Cubic(_, p1, p2, p3) => {
                let ((x1, y1), (x2, y2), (x, y)) = (at(*p1), at(*p2), at(*p3));
                pb.cubic_to(x1, y1, x2, y2, x, y);
                *p3
            }
        });
    }
    pb.finish()
}
