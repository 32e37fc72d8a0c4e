#include "perf/png_plot.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>

namespace strata::perf {
namespace {

// ---- a 5x7 bitmap font: each glyph is 7 rows of 5 pixels ('#' set) ----
const std::map<char, std::array<const char*, 7>>& font() {
  static const std::map<char, std::array<const char*, 7>> glyphs = {
      {'0', {".###.", "#...#", "#..##", "#.#.#", "##..#", "#...#", ".###."}},
      {'1', {"..#..", ".##..", "..#..", "..#..", "..#..", "..#..", ".###."}},
      {'2', {".###.", "#...#", "....#", "...#.", "..#..", ".#...", "#####"}},
      {'3', {"#####", "...#.", "..#..", "...#.", "....#", "#...#", ".###."}},
      {'4', {"...#.", "..##.", ".#.#.", "#..#.", "#####", "...#.", "...#."}},
      {'5', {"#####", "#....", "####.", "....#", "....#", "#...#", ".###."}},
      {'6', {"..##.", ".#...", "#....", "####.", "#...#", "#...#", ".###."}},
      {'7', {"#####", "....#", "...#.", "..#..", ".#...", ".#...", ".#..."}},
      {'8', {".###.", "#...#", "#...#", ".###.", "#...#", "#...#", ".###."}},
      {'9', {".###.", "#...#", "#...#", ".####", "....#", "...#.", ".##.."}},
      {'a', {".....", ".....", ".###.", "....#", ".####", "#...#", ".####"}},
      {'b', {"#....", "#....", "#.##.", "##..#", "#...#", "#...#", "####."}},
      {'c', {".....", ".....", ".###.", "#....", "#....", "#...#", ".###."}},
      {'d', {"....#", "....#", ".##.#", "#..##", "#...#", "#...#", ".####"}},
      {'e', {".....", ".....", ".###.", "#...#", "#####", "#....", ".###."}},
      {'f', {"..##.", ".#..#", ".#...", "###..", ".#...", ".#...", ".#..."}},
      {'g', {".....", ".####", "#...#", "#...#", ".####", "....#", ".###."}},
      {'h', {"#....", "#....", "#.##.", "##..#", "#...#", "#...#", "#...#"}},
      {'i', {"..#..", ".....", ".##..", "..#..", "..#..", "..#..", ".###."}},
      {'j', {"...#.", ".....", "..##.", "...#.", "...#.", "#..#.", ".##.."}},
      {'k', {"#....", "#....", "#..#.", "#.#..", "##...", "#.#..", "#..#."}},
      {'l', {".##..", "..#..", "..#..", "..#..", "..#..", "..#..", ".###."}},
      {'m', {".....", ".....", "##.#.", "#.#.#", "#.#.#", "#...#", "#...#"}},
      {'n', {".....", ".....", "#.##.", "##..#", "#...#", "#...#", "#...#"}},
      {'o', {".....", ".....", ".###.", "#...#", "#...#", "#...#", ".###."}},
      {'p', {".....", ".....", "####.", "#...#", "####.", "#....", "#...."}},
      {'q', {".....", ".....", ".##.#", "#..##", ".####", "....#", "....#"}},
      {'r', {".....", ".....", "#.##.", "##..#", "#....", "#....", "#...."}},
      {'s', {".....", ".....", ".###.", "#....", ".###.", "....#", "####."}},
      {'t', {".#...", ".#...", "###..", ".#...", ".#...", ".#..#", "..##."}},
      {'u', {".....", ".....", "#...#", "#...#", "#...#", "#..##", ".##.#"}},
      {'v', {".....", ".....", "#...#", "#...#", "#...#", ".#.#.", "..#.."}},
      {'w', {".....", ".....", "#...#", "#...#", "#.#.#", "#.#.#", ".#.#."}},
      {'x', {".....", ".....", "#...#", ".#.#.", "..#..", ".#.#.", "#...#"}},
      {'y', {".....", ".....", "#...#", "#...#", ".####", "....#", ".###."}},
      {'z', {".....", ".....", "#####", "...#.", "..#..", ".#...", "#####"}},
      {'B', {"####.", "#...#", "#...#", "####.", "#...#", "#...#", "####."}},
      {'G', {".###.", "#...#", "#....", "#.###", "#...#", "#...#", ".###."}},
      {'K', {"#...#", "#..#.", "#.#..", "##...", "#.#..", "#..#.", "#...#"}},
      {'M', {"#...#", "##.##", "#.#.#", "#.#.#", "#...#", "#...#", "#...#"}},
      {' ', {".....", ".....", ".....", ".....", ".....", ".....", "....."}},
      {'.', {".....", ".....", ".....", ".....", ".....", ".##..", ".##.."}},
      {',', {".....", ".....", ".....", ".....", ".##..", "..#..", ".#..."}},
      {':', {".....", ".##..", ".##..", ".....", ".##..", ".##..", "....."}},
      {'(', {"...#.", "..#..", ".#...", ".#...", ".#...", "..#..", "...#."}},
      {')', {".#...", "..#..", "...#.", "...#.", "...#.", "..#..", ".#..."}},
      {'/', {"....#", "....#", "...#.", "..#..", ".#...", "#....", "#...."}},
      {'_', {".....", ".....", ".....", ".....", ".....", ".....", "#####"}},
      {'-', {".....", ".....", ".....", "#####", ".....", ".....", "....."}},
      {'+', {".....", "..#..", "..#..", "#####", "..#..", "..#..", "....."}},
      {'%', {"##...", "##..#", "...#.", "..#..", ".#...", "#..##", "...##"}},
      {'=', {".....", ".....", "#####", ".....", "#####", ".....", "....."}},
      {'<', {"...#.", "..#..", ".#...", "#....", ".#...", "..#..", "...#."}},
      {'>', {".#...", "..#..", "...#.", "....#", "...#.", "..#..", ".#..."}},
  };
  return glyphs;
}

struct Rgb {
  uint8_t r, g, b;
};

class Canvas {
 public:
  Canvas(int w, int h) : w_(w), h_(h), px_(static_cast<size_t>(w) * static_cast<size_t>(h) * 3, 255) {}
  int width() const { return w_; }
  int height() const { return h_; }
  void set(int x, int y, Rgb c) {
    if (x < 0 || y < 0 || x >= w_ || y >= h_) return;
    uint8_t* p = &px_[(static_cast<size_t>(y) * static_cast<size_t>(w_) + static_cast<size_t>(x)) * 3];
    p[0] = c.r;
    p[1] = c.g;
    p[2] = c.b;
  }
  void rect(int x0, int y0, int x1, int y1, Rgb c) {
    for (int y = y0; y <= y1; ++y)
      for (int x = x0; x <= x1; ++x) set(x, y, c);
  }
  void line(int x0, int y0, int x1, int y1, Rgb c, int thickness) {
    const int dx = std::abs(x1 - x0), dy = -std::abs(y1 - y0);
    const int sx = x0 < x1 ? 1 : -1, sy = y0 < y1 ? 1 : -1;
    int err = dx + dy;
    while (true) {
      for (int t = 0; t < thickness; ++t)
        for (int u = 0; u < thickness; ++u) set(x0 + t - thickness / 2, y0 + u - thickness / 2, c);
      if (x0 == x1 && y0 == y1) break;
      const int e2 = 2 * err;
      if (e2 >= dy) {
        err += dy;
        x0 += sx;
      }
      if (e2 <= dx) {
        err += dx;
        y0 += sy;
      }
    }
  }
  // Text at scale `s`; returns the width drawn.
  int text(int x, int y, const std::string& s, Rgb c, int scale = 2) {
    int cx = x;
    for (char ch : s) {
      auto it = font().find(ch);
      if (it == font().end()) it = font().find(static_cast<char>(std::tolower(static_cast<unsigned char>(ch))));
      if (it != font().end()) {
        for (int row = 0; row < 7; ++row)
          for (int col = 0; col < 5; ++col)
            if (it->second[static_cast<size_t>(row)][col] == '#') rect(cx + col * scale, y + row * scale, cx + col * scale + scale - 1, y + row * scale + scale - 1, c);
      }
      cx += 6 * scale;
    }
    return cx - x;
  }
  static int textWidth(const std::string& s, int scale = 2) { return static_cast<int>(s.size()) * 6 * scale; }
  const std::vector<uint8_t>& pixels() const { return px_; }

 private:
  int w_, h_;
  std::vector<uint8_t> px_;
};

// ---- PNG: IHDR, one IDAT of stored deflate blocks, IEND ----
uint32_t crc32(const uint8_t* data, size_t n, uint32_t crc = 0) {
  static const std::array<uint32_t, 256> table = [] {
    std::array<uint32_t, 256> t{};
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xedb88320u ^ (c >> 1) : c >> 1;
      t[i] = c;
    }
    return t;
  }();
  crc = ~crc;
  for (size_t i = 0; i < n; ++i) crc = table[(crc ^ data[i]) & 0xff] ^ (crc >> 8);
  return ~crc;
}

void put32(std::vector<uint8_t>& out, uint32_t v) {
  for (int s = 24; s >= 0; s -= 8) out.push_back(static_cast<uint8_t>(v >> s));
}

void chunk(std::vector<uint8_t>& png, const char* type, const std::vector<uint8_t>& data) {
  put32(png, static_cast<uint32_t>(data.size()));
  std::vector<uint8_t> body(type, type + 4);
  body.insert(body.end(), data.begin(), data.end());
  png.insert(png.end(), body.begin(), body.end());
  put32(png, crc32(body.data(), body.size()));
}

std::vector<uint8_t> encodePng(const Canvas& c) {
  std::vector<uint8_t> raw;
  const size_t rowBytes = static_cast<size_t>(c.width()) * 3;
  raw.reserve((rowBytes + 1) * static_cast<size_t>(c.height()));
  for (int y = 0; y < c.height(); ++y) {
    raw.push_back(0);  // filter: none
    const uint8_t* row = &c.pixels()[static_cast<size_t>(y) * rowBytes];
    raw.insert(raw.end(), row, row + rowBytes);
  }
  std::vector<uint8_t> z = {0x78, 0x01};
  uint32_t a = 1, b = 0;
  for (uint8_t v : raw) {
    a = (a + v) % 65521;
    b = (b + a) % 65521;
  }
  for (size_t pos = 0; pos < raw.size() || pos == 0;) {
    const size_t n = std::min<size_t>(65535, raw.size() - pos);
    const bool last = pos + n >= raw.size();
    z.push_back(last ? 1 : 0);
    z.push_back(static_cast<uint8_t>(n & 0xff));
    z.push_back(static_cast<uint8_t>(n >> 8));
    z.push_back(static_cast<uint8_t>(~n & 0xff));
    z.push_back(static_cast<uint8_t>((~n >> 8) & 0xff));
    z.insert(z.end(), raw.begin() + static_cast<long>(pos), raw.begin() + static_cast<long>(pos + n));
    pos += n;
    if (last) break;
  }
  put32(z, (b << 16) | a);
  std::vector<uint8_t> png = {0x89, 'P', 'N', 'G', 0x0d, 0x0a, 0x1a, 0x0a};
  std::vector<uint8_t> ihdr;
  put32(ihdr, static_cast<uint32_t>(c.width()));
  put32(ihdr, static_cast<uint32_t>(c.height()));
  ihdr.insert(ihdr.end(), {8, 2, 0, 0, 0});  // 8-bit RGB
  chunk(png, "IHDR", ihdr);
  chunk(png, "IDAT", z);
  chunk(png, "IEND", {});
  return png;
}

std::string decadeLabel(int exponent, bool bytes) {
  // 10^e as 1, 10, 100, 1K, ... (bytes) or 0.01, 0.1, 1, 10, ... (times)
  static const char* suffix[] = {"", "K", "M", "G", "T"};
  if (exponent < 0) {
    std::string s = "0.";
    for (int i = 1; i < -exponent; ++i) s += "0";
    return s + "1";
  }
  if (!bytes) {
    if (exponent < 3) return std::string("1") + std::string(static_cast<size_t>(exponent), '0');
  }
  const int group = std::min(exponent / 3, 4);
  return std::string("1") + std::string(static_cast<size_t>(exponent - 3 * group), '0') + suffix[group];
}

}  // namespace

std::string writeLogLogPlotPng(const std::string& path, const PlotSpec& spec) {
  double xmin = 1e300, xmax = 0, ymin = 1e300, ymax = 0;
  for (const PlotSeries& s : spec.series) {
    for (const auto& [x, y] : s.points) {
      if (x <= 0 || y <= 0) continue;
      xmin = std::min(xmin, x);
      xmax = std::max(xmax, x);
      ymin = std::min(ymin, y);
      ymax = std::max(ymax, y);
    }
  }
  if (xmax <= 0) return "no positive points to plot";
  const int ex0 = static_cast<int>(std::floor(std::log10(xmin))), ex1 = std::max(ex0 + 1, static_cast<int>(std::ceil(std::log10(xmax))));
  const int ey0 = static_cast<int>(std::floor(std::log10(ymin))), ey1 = std::max(ey0 + 1, static_cast<int>(std::ceil(std::log10(ymax))));
  Canvas c(1320, 720);
  const int left = 110, right = c.width() - 400, top = 60, bottom = c.height() - 80;
  auto px = [&](double x) { return left + static_cast<int>((std::log10(x) - ex0) / (ex1 - ex0) * (right - left)); };
  auto py = [&](double y) { return bottom - static_cast<int>((std::log10(y) - ey0) / (ey1 - ey0) * (bottom - top)); };
  const Rgb grid{225, 225, 225}, axis{60, 60, 60}, ink{20, 20, 20};
  for (int e = ex0; e <= ex1; ++e) {
    c.line(px(std::pow(10.0, e)), top, px(std::pow(10.0, e)), bottom, grid, 1);
    const std::string l = decadeLabel(e, true);
    c.text(px(std::pow(10.0, e)) - Canvas::textWidth(l) / 2, bottom + 10, l, ink);
  }
  for (int e = ey0; e <= ey1; ++e) {
    c.line(left, py(std::pow(10.0, e)), right, py(std::pow(10.0, e)), grid, 1);
    const std::string l = decadeLabel(e, false);
    c.text(left - 12 - Canvas::textWidth(l), py(std::pow(10.0, e)) - 7, l, ink);
  }
  c.line(left, top, left, bottom, axis, 2);
  c.line(left, bottom, right, bottom, axis, 2);
  c.text((left + right - Canvas::textWidth(spec.title)) / 2, 20, spec.title, ink);
  c.text((left + right - Canvas::textWidth(spec.xLabel)) / 2, bottom + 40, spec.xLabel, ink);
  c.text(10, top - 30, spec.yLabel, ink);
  static const Rgb palette[] = {{31, 119, 180}, {214, 39, 40},  {44, 160, 44},  {255, 127, 14}, {148, 103, 189},
                                {140, 86, 75},  {227, 119, 194}, {127, 127, 127}, {188, 189, 34}, {23, 190, 207}};
  int legendY = top;
  for (size_t k = 0; k < spec.series.size(); ++k) {
    const Rgb col = palette[k % (sizeof(palette) / sizeof(palette[0]))];
    const PlotSeries& s = spec.series[k];
    for (size_t i = 0; i < s.points.size(); ++i) {
      const auto [x, y] = s.points[i];
      if (x <= 0 || y <= 0) continue;
      c.rect(px(x) - 3, py(y) - 3, px(x) + 3, py(y) + 3, col);
      if (i > 0 && s.points[i - 1].first > 0 && s.points[i - 1].second > 0) {
        c.line(px(s.points[i - 1].first), py(s.points[i - 1].second), px(x), py(y), col, 2);
      }
    }
    c.rect(right + 20, legendY, right + 40, legendY + 14, col);
    c.text(right + 50, legendY, s.label, ink);
    legendY += 26;
  }
  const std::vector<uint8_t> png = encodePng(c);
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return "cannot write " + path;
  const size_t written = std::fwrite(png.data(), 1, png.size(), f);
  std::fclose(f);
  return written == png.size() ? "" : "short write to " + path;
}

}  // namespace strata::perf
