// Geohashes as Redis's geo commands use them: a point's longitude and latitude, each cut
// into 2^26 steps of its range, interleaved into a 52-bit integer that is the point's score
// in a sorted set. Nearby points then have nearby scores, so a search around a point reads
// at most nine score ranges (the geohash box of the centre and its eight neighbours, at a
// step coarse enough for the boxes to cover the search area) and filters the candidates by
// distance.
//
// Everything here reproduces Redis 7.0 to the bit: the latitude range stops at
// +-85.05112878 (Web Mercator's square), longitudes take the odd bits and latitudes the
// even ones, the cell's centre is the decoded point, distances use the haversine formula
// on a sphere of radius 6372797.560856 m, and the step of a search is estimated as Redis
// estimates it. A score stored by redis-server decodes here to the same coordinates and a
// search selects the same members.
//
// Thread-safety: pure functions; a Shape is the caller's.
#pragma once

#include <cstdint>
#include <string>

namespace damselfly::core::geo {

constexpr double kLongMin = -180;
constexpr double kLongMax = 180;
constexpr double kLatMin = -85.05112878;
constexpr double kLatMax = 85.05112878;
// Bits per coordinate of a stored point (52 in all).
constexpr uint8_t kStepMax = 26;
// The quadratic mean radius of WGS-84, as Redis uses it.
constexpr double kEarthRadiusMeters = 6372797.560856;

struct Range {
  double min, max;
};

// `step` bits of each coordinate, interleaved (latitude in bit 0). {0, 0} is "no box":
// a neighbour a search leaves out.
struct HashBits {
  uint64_t bits = 0;
  uint8_t step = 0;
  bool IsZero() const { return bits == 0 && step == 0; }
  bool operator==(const HashBits& o) const { return bits == o.bits && step == o.step; }
};

// The cell a hash names.
struct Area {
  HashBits hash;
  Range longitude, latitude;
};

struct Neighbors {
  HashBits north, east, west, south, north_east, south_east, north_west, south_west;
};

// The ranges Redis stores points in (longitude -180..180, latitude -85.05..85.05).
inline Range LongRange() { return {kLongMin, kLongMax}; }
inline Range LatRange() { return {kLatMin, kLatMax}; }

// The hash of (lon, lat) at `step` (1..32) within the given ranges. false when the point
// is outside them or outside the storable limits (which also bound a standard -90..90
// encoding, as in Redis).
bool Encode(Range long_range, Range lat_range, double lon, double lat, uint8_t step,
            HashBits* hash);
// The cell of `hash` within the given ranges. false for a zero hash.
bool Decode(Range long_range, Range lat_range, HashBits hash, Area* area);
// The hash at its full 52-bit precision: bits shifted left by 52 - 2 * step.
inline uint64_t Align52Bits(HashBits hash) { return hash.bits << (52 - hash.step * 2); }
// The eight cells around `hash` at its step. Longitudes wrap around the antimeridian.
void GetNeighbors(HashBits hash, Neighbors* neighbors);

// The score of a point. REQUIRES: the point within LongRange() x LatRange().
uint64_t ScoreOf(double lon, double lat);
// The centre of the cell a sorted-set score names (clamped to the storable limits), as
// GEOPOS reports it. Any score decodes: like Redis, it is converted to an unsigned 64-bit
// integer first (a score ZADD stored that no GEOADD made gives some point).
void DecodeScore(double score, double* lon, double* lat);
// GEOHASH's 11-character base32 string of a stored score: the point re-encoded with the
// standard latitude range -90..90 (the last character is always '0').
std::string StandardGeohash(double score);

// The step at which a search of `radius_meters` around a point at latitude `lat` reads
// the centre cell and its neighbours (coarser towards the poles). 26 for radius 0.
uint8_t EstimateStepsByRadius(double radius_meters, double lat);
// Great-circle distance in meters (haversine) between two points in degrees.
double Distance(double lon1, double lat1, double lon2, double lat2);
// The distance along a meridian between two latitudes.
double LatDistance(double lat1, double lat2);

// A search area: a circle (BYRADIUS) or an axis-aligned box (BYBOX) around a point.
// Sizes are in the query's unit; `conversion` is meters per unit.
struct Shape {
  enum Type { kCircle, kBox } type = kCircle;
  double lon = 0, lat = 0;
  double radius = 0;             // kCircle
  double width = 0, height = 0;  // kBox
  double conversion = 1;
  // Set by SearchAreas: min lon, min lat, max lon, max lat of the area.
  double bounds[4] = {0, 0, 0, 0};
  // Set by SearchAreas for a circle, so that WithinShape rejects most candidates of the
  // nine cells without the haversine: the largest latitude distance (meters) and
  // longitude difference (degrees) a point in the circle can have, with a margin so
  // that no point the haversine would accept is rejected; the cosine of the centre's
  // latitude, which every distance from the centre uses.
  bool prefiltered = false;
  double max_lat_distance = 0, max_long_delta = 0, cos_lat = 1;
  // Set by SearchAreas for both shapes: how far in latitude degrees (and, for a circle, in
  // longitude degrees: max_long_delta) a point of the shape can be from its centre, with
  // the same kind of margin; CellMayHold's bounds.
  double lat_reach = 90;
};

// The cells a search reads: the centre's cell and those of its neighbours the area
// reaches (the others are zero).
struct SearchBoxes {
  HashBits hash;
  Neighbors neighbors;
  Area area;
};
// The cells that cover `shape` (and fills shape->bounds), as Redis's
// geohashCalculateAreasByShapeWGS84.
SearchBoxes SearchAreas(Shape* shape);

// Whether a point the shape holds may have its score in the cell `hash` (of any step):
// false only when WithinShape rejects every score of the cell (its range, as
// Align52Bits gives it, within 52 bits). A search skips such parts of its nine cells.
// REQUIRES: SearchAreas(shape) ran.
bool CellMayHold(const Shape& shape, HashBits hash);

// Whether the point of a stored score lies in `shape`; then *lon, *lat are its decoded
// coordinates and *distance_meters its distance from the shape's centre.
bool WithinShape(const Shape& shape, double score, double* lon, double* lat,
                 double* distance_meters);

}  // namespace damselfly::core::geo
