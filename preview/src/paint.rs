//! Rasterising a laid-out page with `tiny-skia` and encoding it as PNG.
//!
//! Everything is drawn in logical pixels under one scale transform (the screen's device
//! pixel ratio), except glyphs, which `ab_glyph` rasterises directly at physical size so
//! text stays sharp. Item art is decoded once per render (PNG or JPEG) and scaled with
//! bicubic filtering.

use ab_glyph::{Font, PxScale, ScaleFont, point};
use offer_domain::template::widgets::BoxFit;
use tiny_skia::{
    FillRule, FilterQuality, IntSize, Paint as SkPaint, Path, PathBuilder, Pixmap, PixmapPaint,
    Rect, Transform,
};

use crate::BoundItem;
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

/// Paints `laid` on a `screen`-sized image and encodes it as PNG.
pub fn paint(
    laid: &Laid,
    items: &[BoundItem],
    fonts: &Fonts,
    screen: Screen,
) -> Result<Vec<u8>, RenderError> {
    let mut pixmap = Pixmap::new(screen.width, screen.height).ok_or(RenderError::BadScreen {
        width: screen.width,
        height: screen.height,
    })?;
    pixmap.fill(color(BACKGROUND));
    let art: Vec<Option<Pixmap>> = items
        .iter()
        .map(|it| it.art.as_deref().and_then(decode))
        .collect();
    let painter = Painter {
        fonts,
        art: &art,
        scale: screen.scale,
    };
    painter.draw(&mut pixmap, laid, (0.0, 0.0));
    pixmap
        .encode_png()
        .map_err(|e| RenderError::Encode(e.to_string()))
}

/// Decodes PNG or JPEG art into a premultiplied pixmap; `None` when it cannot be read.
fn decode(bytes: &[u8]) -> Option<Pixmap> {
    let rgba = image::load_from_memory(bytes).ok()?.to_rgba8();
    let (w, h) = rgba.dimensions();
    let mut data = rgba.into_raw();
    for px in data.chunks_exact_mut(4) {
        let a = u16::from(px[3]);
        for c in &mut px[..3] {
            *c = ((u16::from(*c) * a + 127) / 255) as u8;
        }
    }
    Pixmap::from_vec(data, IntSize::from_wh(w, h)?)
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
}

impl Painter<'_> {
    fn draw(&self, pixmap: &mut Pixmap, laid: &Laid, at: (f32, f32)) {
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
                    self.text(pixmap, (at.0 + x, top), line, *size, style);
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
            self.draw(pixmap, child, (at.0 + dx, at.1 + dy));
        }
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
        let transform =
            Transform::from_row(sx, 0.0, 0.0, sy, ox, oy).post_scale(self.scale, self.scale);
        let paint = PixmapPaint {
            quality: FilterQuality::Bicubic,
            ..PixmapPaint::default()
        };
        // Only `cover` draws outside the box; the others need no clip mask.
        let clip = (fit == BoxFit::Cover)
            .then(|| {
                Rect::from_xywh(
                    at.0 * self.scale,
                    at.1 * self.scale,
                    size.0 * self.scale,
                    size.1 * self.scale,
                )
                .and_then(|r| {
                    let mut mask = tiny_skia::Mask::new(pixmap.width(), pixmap.height())?;
                    mask.fill_path(
                        &PathBuilder::from_rect(r),
                        FillRule::Winding,
                        false,
                        Transform::identity(),
                    );
                    Some(mask)
                })
            })
            .flatten();
        pixmap.draw_pixmap(0, 0, art.as_ref(), &paint, transform, clip.as_ref());
    }

    /// One line of text, its top-left at `at` (logical pixels).
    fn text(&self, pixmap: &mut Pixmap, at: (f32, f32), line: &str, size: f32, style: &Style) {
        let px = size * self.scale;
        let face = self.fonts.face(style);
        let font = face.as_scaled(PxScale::from(px));
        let argb = style.color.unwrap_or(crate::text::DEFAULT_COLOR);
        let [a, r, g, b] = argb.to_be_bytes();
        let mut x = at.0 * self.scale;
        let baseline = at.1 * self.scale + font.ascent();
        let mut prev = None;
        for c in line.chars() {
            let id = font.glyph_id(c);
            if let Some(p) = prev {
                x += font.kern(p, id);
            }
            let glyph = id.with_scale_and_position(px, point(x, baseline));
            x += font.h_advance(id);
            prev = Some(id);
            let Some(outlined) = face.outline_glyph(glyph) else {
                continue;
            };
            let bounds = outlined.px_bounds();
            let (gw, gh) = (bounds.width() as u32, bounds.height() as u32);
            let Some(mut glyph_pixmap) = Pixmap::new(gw.max(1), gh.max(1)) else {
                continue;
            };
            let pixels = glyph_pixmap.pixels_mut();
            outlined.draw(|gx, gy, coverage| {
                let alpha = (coverage.clamp(0.0, 1.0) * f32::from(a)).round() as u8;
                let premul = |v: u8| ((u16::from(v) * u16::from(alpha) + 127) / 255) as u8;
                if let (Some(px), Some(c)) = (
                    pixels.get_mut((gy * gw.max(1) + gx) as usize),
                    tiny_skia::PremultipliedColorU8::from_rgba(
                        premul(r),
                        premul(g),
                        premul(b),
                        alpha,
                    ),
                ) {
                    *px = c;
                }
            });
            pixmap.draw_pixmap(
                bounds.min.x as i32,
                bounds.min.y as i32,
                glyph_pixmap.as_ref(),
                &PixmapPaint::default(),
                Transform::identity(),
                None,
            );
        }
    }
}
