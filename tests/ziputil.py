"""Building zip archives in memory for tests, including ones no honest uploader would make."""

import io
import zipfile


def make_zip(files: dict[str, bytes], *, compression: int = zipfile.ZIP_DEFLATED) -> bytes:
    """A zip holding `files` under exactly the member names given (even '../x' or '/etc/x')."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=compression) as archive:
        for name, data in files.items():
            archive.writestr(zipfile.ZipInfo(name), data, compress_type=compression)
    return buffer.getvalue()
