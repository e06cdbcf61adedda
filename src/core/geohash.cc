#include "src/core/geohash.h"

#include <algorithm>
#include <cmath>

namespace damselfly::core::geo {

namespace {

constexpr double kDegToRad = M_PI / 180.0;
// Half the Web Mercator world's width in meters: the radius at which one cell of step 1
// would be needed.
constexpr double kMercatorMax = 20037726.37;

double DegToRad(double deg) { return deg * kDegToRad; }
double RadToDeg(double rad) { return rad / kDegToRad; }

// Spreads the 32 bits of `v` to the even bits of a 64-bit word.
uint64_t SpreadBits(uint32_t v) {
  uint64_t x = v;
  x = (x | (x << 16)) & 0x0000FFFF0000FFFFULL;
  x = (x | (x << 8)) & 0x00FF00FF00FF00FFULL;
  x = (x | (x << 4)) & 0x0F0F0F0F0F0F0F0FULL;
  x = (x | (x << 2)) & 0x3333333333333333ULL;
  x = (x | (x << 1)) & 0x5555555555555555ULL;
  return x;
}

// The inverse of SpreadBits: the even bits of `x`, packed.
uint32_t SqueezeBits(uint64_t x) {
  x &= 0x5555555555555555ULL;
  x = (x | (x >> 1)) & 0x3333333333333333ULL;
  x = (x | (x >> 2)) & 0x0F0F0F0F0F0F0F0FULL;
  x = (x | (x >> 4)) & 0x00FF00FF00FF00FFULL;
  x = (x | (x >> 8)) & 0x0000FFFF0000FFFFULL;
  x = (x | (x >> 16)) & 0x00000000FFFFFFFFULL;
  return uint32_t(x);
}

// Moves a hash one cell along one coordinate (`odd`: the longitude bits) by adding or
// subtracting one in the coordinate's bits only; the carry wraps around at the edges.
uint64_t MoveCell(uint64_t bits, uint8_t step, bool odd, int delta) {
  const uint64_t kOdd = 0xAAAAAAAAAAAAAAAAULL, kEven = 0x5555555555555555ULL;
  uint64_t mine = bits & (odd ? kOdd : kEven);
  const uint64_t others = bits & (odd ? kEven : kOdd);
  // The other coordinate's bits, set: a carry in `mine` runs through them.
  const uint64_t fill = (odd ? kEven : kOdd) >> (64 - step * 2);
  if (delta > 0) {
    mine += fill + 1;
  } else {
    mine = (mine | fill) - (fill + 1);
  }
  mine &= (odd ? kOdd : kEven) >> (64 - step * 2);
  return mine | others;
}

HashBits Moved(HashBits hash, int dx, int dy) {
  if (dx != 0) hash.bits = MoveCell(hash.bits, hash.step, true, dx);
  if (dy != 0) hash.bits = MoveCell(hash.bits, hash.step, false, dy);
  return hash;
}

// A double converted to uint64_t as x86-64 code compiled by GCC does it (Redis's
// `(uint64_t)score`): values from 2^63 on through the high bit, the rest (negative
// ones included) as a signed conversion; what the signed conversion cannot represent,
// NaN included, gives 2^63.
uint64_t ScoreToBits(double score) {
  constexpr double kTwo63 = 9223372036854775808.0;
  auto to_signed = [](double v) -> uint64_t {
    if (!(v >= -kTwo63 && v < kTwo63)) return 1ULL << 63;
    return uint64_t(int64_t(v));
  };
  if (score < kTwo63) return to_signed(score);
  return to_signed(score - kTwo63) ^ (1ULL << 63);
}

// The centre of cell `index` of a stored coordinate (step 26) in [min, max], clamped to
// it: Decode then the centre of the area, with the same operations (the division by
// 2^26 is exact, so the compiler's multiplication gives the same bits), without the
// rest of the Area. Searches decode every candidate: this is their hot path.
inline double CellCenter(uint32_t index, double min, double max) {
  constexpr double kCells = double(1ULL << kStepMax);
  const double scale = max - min;
  const double low = min + (index * 1.0 / kCells) * scale;
  const double high = min + (uint32_t(index + 1) * 1.0 / kCells) * scale;
  double center = (low + high) / 2;
  if (center > max) center = max;
  if (center < min) center = min;
  return center;
}
inline double LatOfBits(uint64_t bits) { return CellCenter(SqueezeBits(bits), kLatMin, kLatMax); }
inline double LongOfBits(uint64_t bits) {
  return CellCenter(SqueezeBits(bits >> 1), kLongMin, kLongMax);
}

// Fills shape->bounds: the area's extent in degrees. Its longitude span is taken at its
// edge nearer the pole, where a distance covers the most degrees of longitude.
void BoundingBox(Shape* shape) {
  const double height =
      shape->conversion * (shape->type == Shape::kCircle ? shape->radius : shape->height / 2);
  const double width =
      shape->conversion * (shape->type == Shape::kCircle ? shape->radius : shape->width / 2);
  const double lat_delta = RadToDeg(height / kEarthRadiusMeters);
  const double long_delta_top =
      RadToDeg(width / kEarthRadiusMeters / std::cos(DegToRad(shape->lat + lat_delta)));
  const double long_delta_bottom =
      RadToDeg(width / kEarthRadiusMeters / std::cos(DegToRad(shape->lat - lat_delta)));
  const bool southern = shape->lat < 0;
  shape->bounds[0] = shape->lon - (southern ? long_delta_bottom : long_delta_top);
  shape->bounds[2] = shape->lon + (southern ? long_delta_bottom : long_delta_top);
  shape->bounds[1] = shape->lat - lat_delta;
  shape->bounds[3] = shape->lat + lat_delta;
}

// Distance from the centre of a prefiltered circle: Distance(shape.lon, shape.lat, lon, lat)
// with the centre's cosine computed once (the same value, so the same result).
double DistanceFromCenter(const Shape& shape, double lon, double lat) {
  const double v = std::sin((DegToRad(lon) - DegToRad(shape.lon)) / 2);
  if (v == 0.0) return LatDistance(shape.lat, lat);
  const double lat1r = DegToRad(shape.lat), lat2r = DegToRad(lat);
  const double u = std::sin((lat2r - lat1r) / 2);
  const double a = u * u + shape.cos_lat * std::cos(lat2r) * v * v;
  return 2.0 * kEarthRadiusMeters * std::asin(std::sqrt(a));
}

// Fills the circle's prefilter. A point at angular distance d <= r from the centre is at
// most r away in latitude, and (when no pole lies within r) at most
// asin(sin r / cos(lat)) away in longitude, the longitude of the circle's tangent
// meridians. Both bounds get a relative margin far above the rounding of the
// haversine, so only points clearly outside are rejected early.
void PrepareCircle(Shape* shape) {
  constexpr double kMargin = 1e-9;
  const double radius_m = shape->radius * shape->conversion;
  const double angle = radius_m / kEarthRadiusMeters;
  const double lat_r = DegToRad(shape->lat);
  shape->cos_lat = std::cos(lat_r);
  shape->max_lat_distance = radius_m * (1 + kMargin) + 1e-6;
  shape->max_long_delta = 360;  // no bound
  if (angle < M_PI / 2 - std::fabs(lat_r) - 1e-6) {
    const double ratio = std::sin(angle) / shape->cos_lat;
    if (ratio < 1) shape->max_long_delta = RadToDeg(std::asin(ratio)) * (1 + kMargin) + 1e-9;
  }
  shape->prefiltered = true;
}

}  // namespace

bool Encode(Range long_range, Range lat_range, double lon, double lat, uint8_t step,
            HashBits* hash) {
  if (step == 0 || step > 32) return false;
  if (lon > kLongMax || lon < kLongMin || lat > kLatMax || lat < kLatMin) return false;
  if (lat < lat_range.min || lat > lat_range.max || lon < long_range.min || lon > long_range.max) {
    return false;
  }
  double lat_offset = (lat - lat_range.min) / (lat_range.max - lat_range.min);
  double long_offset = (lon - long_range.min) / (long_range.max - long_range.min);
  lat_offset *= double(1ULL << step);
  long_offset *= double(1ULL << step);
  // Truncated to 32 bits as Redis truncates them (a point on the upper edge gets offset
  // 2^step: its cell is the one past the last, which decodes to the clamped edge).
  hash->bits = SpreadBits(uint32_t(lat_offset)) | (SpreadBits(uint32_t(long_offset)) << 1);
  hash->step = step;
  return true;
}

bool Decode(Range long_range, Range lat_range, HashBits hash, Area* area) {
  if (hash.IsZero()) return false;
  area->hash = hash;
  const uint32_t ilat = SqueezeBits(hash.bits);
  const uint32_t ilon = SqueezeBits(hash.bits >> 1);
  const double cells = double(1ULL << hash.step);
  const double lat_scale = lat_range.max - lat_range.min;
  const double long_scale = long_range.max - long_range.min;
  area->latitude.min = lat_range.min + (ilat * 1.0 / cells) * lat_scale;
  area->latitude.max = lat_range.min + ((ilat + 1) * 1.0 / cells) * lat_scale;
  area->longitude.min = long_range.min + (ilon * 1.0 / cells) * long_scale;
  area->longitude.max = long_range.min + ((ilon + 1) * 1.0 / cells) * long_scale;
  return true;
}

void GetNeighbors(HashBits hash, Neighbors* n) {
  n->east = Moved(hash, 1, 0);
  n->west = Moved(hash, -1, 0);
  n->south = Moved(hash, 0, -1);
  n->north = Moved(hash, 0, 1);
  n->north_west = Moved(hash, -1, 1);
  n->south_west = Moved(hash, -1, -1);
  n->north_east = Moved(hash, 1, 1);
  n->south_east = Moved(hash, 1, -1);
}

uint64_t ScoreOf(double lon, double lat) {
  HashBits hash;
  Encode(LongRange(), LatRange(), lon, lat, kStepMax, &hash);
  return Align52Bits(hash);
}

void DecodeScore(double score, double* lon, double* lat) {
  const uint64_t bits = ScoreToBits(score);
  *lon = LongOfBits(bits);
  *lat = LatOfBits(bits);
}

std::string StandardGeohash(double score) {
  static constexpr char kAlphabet[] = "0123456789bcdefghjkmnpqrstuvwxyz";
  double lon, lat;
  DecodeScore(score, &lon, &lat);
  HashBits hash;
  Encode({-180, 180}, {-90, 90}, lon, lat, kStepMax, &hash);
  // 52 bits give ten characters and two bits; the eleventh is '0', as in Redis.
  std::string out(11, '0');
  for (int i = 0; i < 10; ++i) out[i] = kAlphabet[(hash.bits >> (52 - (i + 1) * 5)) & 0x1f];
  return out;
}

uint8_t EstimateStepsByRadius(double radius_meters, double lat) {
  if (radius_meters == 0) return kStepMax;
  int step = 1;
  while (radius_meters < kMercatorMax) {
    radius_meters *= 2;
    ++step;
  }
  step -= 2;  // so that the radius fits the cells in most cases
  // Meridians converge towards the poles: wider cells there.
  if (lat > 66 || lat < -66) {
    --step;
    if (lat > 80 || lat < -80) --step;
  }
  if (step < 1) step = 1;
  if (step > kStepMax) step = kStepMax;
  return step;
}

double LatDistance(double lat1, double lat2) {
  return kEarthRadiusMeters * std::fabs(DegToRad(lat2) - DegToRad(lat1));
}

double Distance(double lon1, double lat1, double lon2, double lat2) {
  const double v = std::sin((DegToRad(lon2) - DegToRad(lon1)) / 2);
  // Same longitude: the haversine reduces to the latitude difference.
  if (v == 0.0) return LatDistance(lat1, lat2);
  const double lat1r = DegToRad(lat1), lat2r = DegToRad(lat2);
  const double u = std::sin((lat2r - lat1r) / 2);
  const double a = u * u + std::cos(lat1r) * std::cos(lat2r) * v * v;
  return 2.0 * kEarthRadiusMeters * std::asin(std::sqrt(a));
}

SearchBoxes SearchAreas(Shape* shape) {
  BoundingBox(shape);
  const double min_lon = shape->bounds[0], min_lat = shape->bounds[1];
  const double max_lon = shape->bounds[2], max_lat = shape->bounds[3];
  // A box is covered by the circle through its corners.
  double radius_meters = shape->type == Shape::kCircle
                             ? shape->radius
                             : std::sqrt((shape->width / 2) * (shape->width / 2) +
                                         (shape->height / 2) * (shape->height / 2));
  radius_meters *= shape->conversion;

  uint8_t steps = EstimateStepsByRadius(radius_meters, shape->lat);
  SearchBoxes out;
  auto compute = [&] {
    Encode(LongRange(), LatRange(), shape->lon, shape->lat, steps, &out.hash);
    GetNeighbors(out.hash, &out.neighbors);
    Decode(LongRange(), LatRange(), out.hash, &out.area);
  };
  compute();

  // Near a cell's edge the estimated step can be too fine: a neighbour does not reach
  // the far side of the area. One step coarser then.
  Area north, south, east, west;
  Decode(LongRange(), LatRange(), out.neighbors.north, &north);
  Decode(LongRange(), LatRange(), out.neighbors.south, &south);
  Decode(LongRange(), LatRange(), out.neighbors.east, &east);
  Decode(LongRange(), LatRange(), out.neighbors.west, &west);
  const bool decrease_step = north.latitude.max < max_lat || south.latitude.min > min_lat ||
                             east.longitude.max < max_lon || west.longitude.min > min_lon;
  if (steps > 1 && decrease_step) {
    --steps;
    compute();
  }

  if (shape->type == Shape::kCircle) {
    PrepareCircle(shape);
    shape->lat_reach = RadToDeg(shape->max_lat_distance / kEarthRadiusMeters) * (1 + 1e-9) + 1e-9;
  } else {
    shape->max_long_delta = 360;
    shape->lat_reach =
        RadToDeg(shape->height * shape->conversion / 2 / kEarthRadiusMeters) * (1 + 1e-9) + 1e-9;
  }

  // Leave out the neighbours on a side the area does not reach beyond the centre cell.
  if (steps >= 2) {
    Neighbors& n = out.neighbors;
    if (out.area.latitude.min < min_lat) n.south = n.south_west = n.south_east = HashBits{};
    if (out.area.latitude.max > max_lat) n.north = n.north_east = n.north_west = HashBits{};
    if (out.area.longitude.min < min_lon) n.west = n.south_west = n.north_west = HashBits{};
    if (out.area.longitude.max > max_lon) n.east = n.south_east = n.north_east = HashBits{};
  }
  return out;
}

bool CellMayHold(const Shape& shape, HashBits hash) {
  Area area;
  Decode(LongRange(), LatRange(), hash, &area);
  // A stored score of the cell decodes to a point of its area (the centres of its step-26
  // cells; the rounding is monotonic, so not even by a bit outside it).
  if (area.latitude.min > shape.lat + shape.lat_reach) return false;
  if (area.latitude.max < shape.lat - shape.lat_reach) return false;
  if (shape.max_long_delta >= 180) return true;
  if (shape.lon >= area.longitude.min && shape.lon <= area.longitude.max) return true;
  auto gap = [&](double lon) {
    const double d = std::fabs(lon - shape.lon);
    return d > 180 ? 360 - d : d;
  };
  const double nearest = std::min(gap(area.longitude.min), gap(area.longitude.max));
  return nearest <= shape.max_long_delta * (1 + 1e-9) + 1e-9;
}

bool WithinShape(const Shape& shape, double score, double* lon, double* lat,
                 double* distance_meters) {
  if (shape.type == Shape::kCircle) {
    if (!shape.prefiltered) {
      DecodeScore(score, lon, lat);
      *distance_meters = Distance(shape.lon, shape.lat, *lon, *lat);
      return *distance_meters <= shape.radius * shape.conversion;
    }
    const uint64_t bits = ScoreToBits(score);
    *lat = LatOfBits(bits);
    if (LatDistance(*lat, shape.lat) > shape.max_lat_distance) return false;
    *lon = LongOfBits(bits);
    double long_delta = std::fabs(*lon - shape.lon);
    if (long_delta > 180) long_delta = 360 - long_delta;
    if (long_delta > shape.max_long_delta) return false;
    *distance_meters = DistanceFromCenter(shape, *lon, *lat);
    return *distance_meters <= shape.radius * shape.conversion;
  }
  DecodeScore(score, lon, lat);
  // In the box when within half its height along the meridian and half its width along
  // the point's parallel (cheaper latitude test first).
  if (LatDistance(*lat, shape.lat) > shape.height * shape.conversion / 2) return false;
  if (Distance(*lon, *lat, shape.lon, *lat) > shape.width * shape.conversion / 2) return false;
  *distance_meters = Distance(shape.lon, shape.lat, *lon, *lat);
  return true;
}

}  // namespace damselfly::core::geo
