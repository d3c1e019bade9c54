"""Makes the preview tests' files in a folder: real images, PDFs, texts and archives.

Images come from Pillow (JPEG with EXIF, PNG, GIF) and from libvips' own `vips` command
(WebP, TIFF, HEIC, AVIF); the PDF and SVG are written out as text; archives come from
Python's zipfile and tarfile and from bsdtar (7-Zip). Prints nothing; exits non-zero when
something cannot be made.

usage: make_media.py FOLDER
"""
import io
import struct
import subprocess
import sys
import tarfile
import zipfile
import zlib
from pathlib import Path

from PIL import Image

folder = Path(sys.argv[1])
folder.mkdir(parents=True, exist_ok=True)


def gradient(width, height):
    image = Image.new("RGB", (width, height))
    image.putdata([((x * 255) // width, (y * 255) // height, 128) for y in range(height) for x in range(width)])
    return image


# A photo: 640 × 480, turned right (orientation 6), taken 2024-05-01 12:30:00 with a camera.
photo = gradient(640, 480)
exif = Image.Exif()
exif[0x010F] = "Canon"  # Make
exif[0x0110] = "EOS R5"  # Model
exif[0x0112] = 6  # Orientation
exif[0x0132] = "2024:05:02 08:00:00"  # DateTime (changed later)
exif.get_ifd(0x8769)[0x9003] = "2024:05:01 12:30:00"  # DateTimeOriginal
photo.save(folder / "photo.jpg", quality=90, exif=exif.tobytes())

gradient(300, 200).save(folder / "wide.png")
gradient(64, 48).save(folder / "small.png")
frames = [Image.new("RGB", (120, 90), color) for color in ((255, 0, 0), (0, 255, 0), (0, 0, 255))]
frames[0].save(folder / "animated.gif", save_all=True, append_images=frames[1:], duration=100, loop=0)

for name in ("wide.webp", "wide.tif", "wide.heic", "wide.avif"):
    subprocess.run(["vips", "copy", str(folder / "wide.png"), str(folder / name)], check=True,
                   stderr=subprocess.DEVNULL)

(folder / "drawing.svg").write_text(
    '<svg xmlns="http://www.w3.org/2000/svg" width="400" height="100">'
    '<rect width="400" height="100" fill="#36c"/></svg>\n')

# A PDF of two pages (A4 then Letter) with a title and an author.
objects = [
    b"<< /Type /Catalog /Pages 2 0 R >>",
    b"<< /Type /Pages /Kids [3 0 R 5 0 R] /Count 2 >>",
    b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Contents 4 0 R >>",
    None,
    b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R >>",
    "<< /Title (Quarterly report) /Author (Li Wei) >>".encode(),
]
stream = b"0 0 1 rg 100 100 200 200 re f"
objects[3] = b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream"
pdf = bytearray(b"%PDF-1.4\n")
offsets = []
for number, body in enumerate(objects, start=1):
    offsets.append(len(pdf))
    pdf += b"%d 0 obj\n" % number + body + b"\nendobj\n"
xref = len(pdf)
pdf += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
for offset in offsets:
    pdf += b"%010d 00000 n \n" % offset
pdf += b"trailer\n<< /Size %d /Root 1 0 R /Info 6 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
(folder / "report.pdf").write_bytes(bytes(pdf))

# Texts: UTF-8 (with a terminal escape in it), UTF-16 with its mark, GB 18030.
lines = [f"line {n}: 你好" for n in range(1, 26)]
(folder / "notes.txt").write_text("\n".join(lines) + "\n\x1b[31mred\n", encoding="utf-8")
(folder / "utf16.txt").write_bytes(b"\xff\xfe" + "第一行\n第二行".encode("utf-16-le"))
(folder / "chinese.txt").write_bytes("中文文本，第一行\n第二行\n".encode("gb18030"))

# Archives: zip (a name in Chinese), tar, tar.gz of 30 entries, 7z.
with zipfile.ZipFile(folder / "bundle.zip", "w", zipfile.ZIP_DEFLATED) as archive:
    archive.writestr("docs/readme.txt", "hello " * 100)
    archive.writestr("图片/照片.jpg", b"\xff\xd8" + b"x" * 1000)
    archive.writestr("empty/", b"")
for name, mode in (("bundle.tar", "w"), ("bundle.tar.gz", "w:gz")):
    with tarfile.open(folder / name, mode) as archive:
        for n in range(30):
            data = b"y" * n
            info = tarfile.TarInfo(f"items/f{n:02d}.txt")
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
seven = folder / "seven-source"
seven.mkdir(exist_ok=True)
(seven / "a.txt").write_text("alpha\n")
(seven / "b.txt").write_text("beta\n")
subprocess.run(["bsdtar", "--format", "7zip", "-cf", str(folder / "bundle.7z"), "-C", str(seven), "a.txt", "b.txt"],
               check=True)
for item in seven.iterdir():
    item.unlink()
seven.rmdir()

# What must fail: a JPEG that is not one, and a PNG declaring 100,000 × 100,000 pixels.
(folder / "corrupt.jpg").write_bytes(b"\xff\xd8\xff\xe0 this is not really a JPEG " * 10)


def chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


bomb = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 100000, 100000, 8, 2, 0, 0, 0))
bomb += chunk(b"IDAT", zlib.compress(b"\0" * 30001 * 10)) + chunk(b"IEND", b"")
(folder / "bomb.png").write_bytes(bomb)

# An interlaced (Adam7) 16-bit PNG declaring 5000 × 5000 pixels: under the 256-megapixel cap,
# but libvips must decode an interlaced image whole (150 MB here) before shrinking it.
interlaced = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 5000, 5000, 16, 2, 0, 0, 1))
interlaced += chunk(b"IDAT", zlib.compress(b"\0" * 1000)) + chunk(b"IEND", b"")
(folder / "interlaced.png").write_bytes(interlaced)


class Zeros(io.RawIOBase):
    """`size` zero bytes, made as they are read."""

    def __init__(self, size):
        self.left = size

    def readable(self):
        return True

    def readinto(self, buffer):
        count = min(len(buffer), self.left)
        buffer[:count] = bytes(count)
        self.left -= count
        return count


# A small tar.gz that expands to 512 MiB of zeros, with one more entry after them: listing it
# must not decompress it all to reach the second header.
with tarfile.open(folder / "zeros.tar.gz", "w:gz", compresslevel=1) as archive:
    for name, size in [("zeros.bin", 512 << 20), ("after.txt", 5)]:
        info = tarfile.TarInfo(name)
        info.size = size
        archive.addfile(info, io.BufferedReader(Zeros(size)))
