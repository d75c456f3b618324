//! The per-game asset library (item art). An upload is accepted only when its bytes decode,
//! whole, as a PNG, JPEG or WebP image within the configured dimensions, whatever its name or
//! declared type says: a file that only starts like an image (an image signature followed by
//! HTML, say) is refused, so nothing but an image is ever served from the library.

use sha2::{Digest, Sha256};
use uuid::Uuid;

use crate::service::Services;
use crate::service::{ServiceError, ServiceResult};
use crate::store::Collection;

/// A supported image format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImageKind {
    /// PNG.
    Png,
    /// JPEG.
    Jpeg,
    /// WebP.
    Webp,
}

impl ImageKind {
    /// Recognises the format from the file's magic bytes.
    pub fn sniff(bytes: &[u8]) -> Option<Self> {
        if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
            Some(Self::Png)
        } else if bytes.starts_with(&[0xFF, 0xD8, 0xFF]) {
            Some(Self::Jpeg)
        } else if bytes.len() >= 12 && &bytes[0..4] == b"RIFF" && &bytes[8..12] == b"WEBP" {
            Some(Self::Webp)
        } else {
            None
        }
    }

    /// MIME type served back.
    pub fn mime(self) -> &'static str {
        match self {
            Self::Png => "image/png",
            Self::Jpeg => "image/jpeg",
            Self::Webp => "image/webp",
        }
    }

    fn tag(self) -> u8 {
        match self {
            Self::Png => 1,
            Self::Jpeg => 2,
            Self::Webp => 3,
        }
    }

    fn format(self) -> image::ImageFormat {
        match self {
            Self::Png => image::ImageFormat::Png,
            Self::Jpeg => image::ImageFormat::Jpeg,
            Self::Webp => image::ImageFormat::WebP,
        }
    }

    fn from_tag(tag: u8) -> Option<Self> {
        match tag {
            1 => Some(Self::Png),
            2 => Some(Self::Jpeg),
            3 => Some(Self::Webp),
            _ => None,
        }
    }
}

/// Where an asset is served.
pub fn url(game_id: Uuid, asset_id: &str) -> String {
    format!("/v1/games/{game_id}/assets/{asset_id}")
}

/// An uploaded image that decoded whole.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Checked {
    /// Its format.
    pub kind: ImageKind,
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
}

/// Decodes the whole image (not only its first bytes) within `max_side` pixels a side.
/// Decoding is CPU work, so it runs off the request threads.
async fn check_image(bytes: Vec<u8>, max_side: u32) -> ServiceResult<Checked> {
    let not_an_image = || {
        ServiceError::UnsupportedMediaType(
            "the file is not a whole PNG, JPEG or WebP image (checked by decoding it)".into(),
        )
    };
    let kind = ImageKind::sniff(&bytes).ok_or_else(not_an_image)?;
    let decoded = tokio::task::spawn_blocking(move || {
        let mut limits = image::Limits::default();
        limits.max_image_width = Some(max_side);
        limits.max_image_height = Some(max_side);
        let mut reader =
            image::ImageReader::with_format(std::io::Cursor::new(bytes), kind.format());
        reader.limits(limits);
        reader.decode()
    })
    .await
    .map_err(|e| ServiceError::Internal(format!("image check stopped: {e}")))?;
    match decoded {
        Ok(img) => Ok(Checked {
            kind,
            width: img.width(),
            height: img.height(),
        }),
        Err(image::ImageError::Limits(_)) => Err(ServiceError::invalid(
            "image",
            format!("at most {max_side} x {max_side} pixels"),
        )),
        Err(_) => Err(not_an_image()),
    }
}

/// Stores an image; its id is derived from its content, so re-uploading is idempotent.
pub async fn put(
    state: &Services,
    game_id: Uuid,
    bytes: &[u8],
) -> ServiceResult<(String, Checked)> {
    let checked = check_image(bytes.to_vec(), state.settings.catalogue.max_image_side_px).await?;
    let kind = checked.kind;
    let digest = Sha256::digest(bytes);
    let asset_id: String = digest.iter().take(12).map(|b| format!("{b:02x}")).collect();
    let mut value = Vec::with_capacity(bytes.len() + 1);
    value.push(kind.tag());
    value.extend_from_slice(bytes);
    state
        .store
        .put_all(
            Collection::game(game_id, "assets"),
            vec![(asset_id.clone(), value)],
        )
        .await?;
    Ok((asset_id, checked))
}

/// An image and its format.
pub async fn get(
    state: &Services,
    game_id: Uuid,
    asset_id: &str,
) -> ServiceResult<(ImageKind, Vec<u8>)> {
    let value = state
        .store
        .get(Collection::game(game_id, "assets"), asset_id)
        .await?
        .ok_or(ServiceError::NotFound("asset"))?;
    let (tag, data) = value
        .split_first()
        .ok_or_else(|| ServiceError::Internal("empty asset".into()))?;
    let kind =
        ImageKind::from_tag(*tag).ok_or_else(|| ServiceError::Internal("bad asset tag".into()))?;
    Ok((kind, data.to_vec()))
}

/// Whether an asset exists (items may only name existing art).
pub async fn exists(state: &Services, game_id: Uuid, asset_id: &str) -> ServiceResult<bool> {
    Ok(state
        .store
        .get(Collection::game(game_id, "assets"), asset_id)
        .await?
        .is_some())
}
