#include "src/core/geohash.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>

#include "gtest/gtest.h"

namespace damselfly::core::geo {
namespace {

// GEOPOS's text of a coordinate: Redis prints the long double with 17 decimals.
std::string Human(double v) {
  char buf[64];
  int len = snprintf(buf, sizeof(buf), "%.17Lf", static_cast<long double>(v));
  std::string s(buf, len);
  while (s.back() == '0') s.pop_back();
  if (s.back() == '.') s.pop_back();
  return s;
}

std::string Fixed4(double v) {
  char buf[64];
  return std::string(buf, snprintf(buf, sizeof(buf), "%.4f", v));
}

// Scores, positions and geohashes redis-server 7.0 gave for the same GEOADDs.
struct Known {
  double lon, lat;
  uint64_t score;
  const char* pos_lon;
  const char* pos_lat;
  const char* geohash;
};

constexpr Known kKnown[] = {
    {13.361389, 38.115556, 3479099956230698, "13.36138933897018433", "38.11555639549629859",
     "sqc8b49rny0"},
    {15.087269, 37.502669, 3479447370796909, "15.08726745843887329", "37.50266842333162032",
     "sqdtr74hyu0"},
    {180, 85.05112878, 13510798882111488, "180", "85.0511287799999991", "bp05b5048p0"},
    {-180, -85.05112878, 0, "-179.99999731779098511", "-85.05112751263942528", "00bh0hbj200"},
    {0, 0, 3377699720527872, "0.00000268220901489", "0.00000126736058093", "s0000000000"},
    {-0.1, 51.5, 2163557734948328, "-0.10000079870223999", "51.49999939411607386", "gcpuvxr1jz0"},
    {179.9999, 0, 4128299658422434, "179.99990075826644897", "0.00000126736058093", "xbpbpbpbj80"},
    {-179.9999, 0, 1125899906843144, "-179.99990075826644897", "0.00000126736058093",
     "80000000420"},
};

TEST(GeohashTest, ScoresPositionsAndHashesAsRedis) {
  for (const Known& k : kKnown) {
    SCOPED_TRACE(k.geohash);
    const uint64_t score = ScoreOf(k.lon, k.lat);
    EXPECT_EQ(score, k.score);
    double lon, lat;
    DecodeScore(double(score), &lon, &lat);
    EXPECT_EQ(Human(lon), k.pos_lon);
    EXPECT_EQ(Human(lat), k.pos_lat);
    EXPECT_EQ(StandardGeohash(double(score)), k.geohash);
  }
}

// DecodeScore's fast path is Decode's cell centre, clamped, to the bit (53-bit values:
// exact as scores, past the 52 bits GEOADD makes).
TEST(GeohashTest, DecodeScoreIsTheCellCentre) {
  std::mt19937_64 rng(3);
  for (int i = 0; i < 100000; ++i) {
    const uint64_t bits = rng() >> 11;
    Area area;
    ASSERT_TRUE(Decode(LongRange(), LatRange(), HashBits{bits, kStepMax}, &area));
    double lon, lat;
    DecodeScore(double(bits), &lon, &lat);
    ASSERT_EQ(lon, std::clamp((area.longitude.min + area.longitude.max) / 2, kLongMin, kLongMax));
    ASSERT_EQ(lat, std::clamp((area.latitude.min + area.latitude.max) / 2, kLatMin, kLatMax));
  }
}

TEST(GeohashTest, EncodeRefusesPointsOutsideTheLimits) {
  HashBits hash;
  EXPECT_FALSE(Encode(LongRange(), LatRange(), 180.000001, 0, kStepMax, &hash));
  EXPECT_FALSE(Encode(LongRange(), LatRange(), 0, 85.06, kStepMax, &hash));
  EXPECT_FALSE(Encode(LongRange(), LatRange(), 0, -85.06, kStepMax, &hash));
  EXPECT_FALSE(Encode(LongRange(), LatRange(), 0, 0, 0, &hash));
  EXPECT_TRUE(Encode(LongRange(), LatRange(), -180, -85.05112878, kStepMax, &hash));
  EXPECT_EQ(hash.bits, 0u);
}

TEST(GeohashTest, DistancesAsRedis) {
  // GEODIST of the points above (meters unless said).
  double plon, plat, clon, clat;
  DecodeScore(3479099956230698, &plon, &plat);
  DecodeScore(3479447370796909, &clon, &clat);
  EXPECT_EQ(Fixed4(Distance(plon, plat, clon, clat)), "166274.1516");
  double a1lon, a1lat, a2lon, a2lat;
  DecodeScore(4128299658422434, &a1lon, &a1lat);
  DecodeScore(1125899906843144, &a2lon, &a2lat);
  EXPECT_EQ(Fixed4(Distance(a1lon, a1lat, a2lon, a2lat)), "22.0766");  // across 180
  double nlon, nlat, slon, slat;
  DecodeScore(13510798882111488, &nlon, &nlat);
  DecodeScore(0, &slon, &slat);
  EXPECT_EQ(Fixed4(Distance(nlon, nlat, slon, slat)), "18919844.5891");
  double llon, llat, zlon, zlat;
  DecodeScore(2163557734948328, &llon, &llat);
  DecodeScore(3377699720527872, &zlon, &zlat);
  EXPECT_EQ(Fixed4(Distance(llon, llat, zlon, zlat) / 1609.34), "3559.3237");
  EXPECT_EQ(Distance(10, 20, 10, 20), 0);
  EXPECT_DOUBLE_EQ(Distance(10, 0, 10, 1), LatDistance(0, 1));
}

TEST(GeohashTest, EstimateSteps) {
  EXPECT_EQ(EstimateStepsByRadius(0, 0), 26);
  EXPECT_EQ(EstimateStepsByRadius(1, 0), 24);  // 1 m doubles 25 times to pass 20037 km
  EXPECT_EQ(EstimateStepsByRadius(1000, 0), 14);
  EXPECT_EQ(EstimateStepsByRadius(1000, 70), 13);
  EXPECT_EQ(EstimateStepsByRadius(1000, -81), 12);
  EXPECT_EQ(EstimateStepsByRadius(20037726.37, 0), 1);
  EXPECT_EQ(EstimateStepsByRadius(1e9, 89), 1);
}

TEST(GeohashTest, NeighborsAreAdjacentAndWrapAtTheAntimeridian) {
  HashBits hash;
  ASSERT_TRUE(Encode(LongRange(), LatRange(), 10, 10, 8, &hash));
  Area center, east, north, south_west;
  Neighbors n;
  GetNeighbors(hash, &n);
  Decode(LongRange(), LatRange(), hash, &center);
  Decode(LongRange(), LatRange(), n.east, &east);
  Decode(LongRange(), LatRange(), n.north, &north);
  Decode(LongRange(), LatRange(), n.south_west, &south_west);
  EXPECT_DOUBLE_EQ(east.longitude.min, center.longitude.max);
  EXPECT_DOUBLE_EQ(east.latitude.min, center.latitude.min);
  EXPECT_DOUBLE_EQ(north.latitude.min, center.latitude.max);
  EXPECT_DOUBLE_EQ(north.longitude.min, center.longitude.min);
  EXPECT_DOUBLE_EQ(south_west.longitude.max, center.longitude.min);
  EXPECT_DOUBLE_EQ(south_west.latitude.max, center.latitude.min);

  ASSERT_TRUE(Encode(LongRange(), LatRange(), 179.99, 0, 8, &hash));
  GetNeighbors(hash, &n);
  Area wrapped;
  Decode(LongRange(), LatRange(), n.east, &wrapped);
  EXPECT_DOUBLE_EQ(wrapped.longitude.min, -180);
}

TEST(GeohashTest, SearchAreasCoverTheShape) {
  Shape shape;
  shape.lon = 15;
  shape.lat = 37;
  shape.radius = 200;
  shape.conversion = 1000;
  SearchBoxes boxes = SearchAreas(&shape);
  EXPECT_LT(shape.bounds[0], 15);
  EXPECT_GT(shape.bounds[2], 15);
  EXPECT_NEAR(shape.bounds[3] - 37, 200000 / kEarthRadiusMeters * 180 / M_PI, 1e-9);
  // The centre cell holds the centre.
  EXPECT_LE(boxes.area.longitude.min, 15);
  EXPECT_GE(boxes.area.longitude.max, 15);
  EXPECT_LE(boxes.area.latitude.min, 37);
  EXPECT_GE(boxes.area.latitude.max, 37);

  double lon, lat, dist;
  // Palermo is 190.4424 km from (15, 37): in a 200 km circle, not in a 100 km one.
  EXPECT_TRUE(WithinShape(shape, 3479099956230698, &lon, &lat, &dist));
  EXPECT_EQ(Fixed4(dist / 1000), "190.4424");
  shape.radius = 100;
  EXPECT_FALSE(WithinShape(shape, 3479099956230698, &lon, &lat, &dist));

  Shape box;
  box.type = Shape::kBox;
  box.lon = 15;
  box.lat = 37;
  box.width = 400;
  box.height = 400;
  box.conversion = 1000;
  SearchAreas(&box);
  EXPECT_TRUE(WithinShape(box, 3479099956230698, &lon, &lat, &dist));
  box.height = 200;  // Palermo is 124 km north of 37
  EXPECT_FALSE(WithinShape(box, 3479099956230698, &lon, &lat, &dist));
}

// The circle's prefilter (SearchAreas) only skips the haversine of points it would reject:
// every point gets the same answer and distance as without it, near the poles, across the
// antimeridian and on the circle's edge included.
TEST(GeohashTest, PrefilterKeepsEveryAnswer) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> unit(0, 1);
  for (int round = 0; round < 2000; ++round) {
    Shape plain;
    plain.lon = -180 + 360 * unit(rng);
    plain.lat = (round % 10 == 0 ? 80 + 5 * unit(rng) : -85 + 170 * unit(rng));
    plain.radius = std::pow(10, 7 * unit(rng));
    plain.conversion = 1;
    Shape filtered = plain;
    SearchAreas(&filtered);
    ASSERT_TRUE(filtered.prefiltered);
    for (int i = 0; i < 200; ++i) {
      // Points around the centre at up to twice the radius, some exactly on its edge.
      const double spread = 2 * plain.radius / kEarthRadiusMeters * 180 / M_PI;
      double lon = plain.lon + spread * (2 * unit(rng) - 1) * (i % 2 ? 1 : 10);
      double lat = plain.lat + spread * (2 * unit(rng) - 1);
      lon = std::fmod(lon + 540, 360) - 180;
      lat = std::clamp(lat, kLatMin, kLatMax);
      const double score = double(ScoreOf(lon, lat));
      double l1, a1, d1 = -1, l2, a2, d2 = -1;
      const bool in_plain = WithinShape(plain, score, &l1, &a1, &d1);
      if (i % 5 == 0) {
        // The circle through this point: on the edge, to the last bit.
        filtered.radius = plain.radius = d1;
        SearchAreas(&filtered);
      }
      const bool in_plain_again = WithinShape(plain, score, &l1, &a1, &d1);
      const bool in_filtered = WithinShape(filtered, score, &l2, &a2, &d2);
      ASSERT_EQ(in_plain_again, in_filtered) << round << " " << i;
      if (in_filtered) ASSERT_EQ(d1, d2);
      (void)in_plain;
    }
  }
}

// CellMayHold never refuses a cell holding a point the shape accepts: every cell (of any
// step) around every accepted point, for circles and boxes, near the poles and across
// the antimeridian too.
TEST(GeohashTest, CellMayHoldKeepsEveryAcceptedPoint) {
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> unit(0, 1);
  size_t accepted = 0, refused_cells = 0;
  for (int round = 0; round < 1000; ++round) {
    Shape shape;
    shape.type = round % 2 ? Shape::kBox : Shape::kCircle;
    shape.lon = round % 7 == 0 ? 179.9 + 0.1 * unit(rng) : -180 + 360 * unit(rng);
    shape.lat = round % 10 == 0 ? 80 + 5 * unit(rng) : -85 + 170 * unit(rng);
    shape.radius = std::pow(10, 6.5 * unit(rng));
    shape.width = std::pow(10, 6.5 * unit(rng));
    shape.height = shape.width * (0.2 + 3 * unit(rng));
    SearchAreas(&shape);
    const double reach =
        2 * std::max({shape.radius, shape.width, shape.height}) / kEarthRadiusMeters * 180 / M_PI;
    for (int i = 0; i < 200; ++i) {
      double lon = shape.lon + reach * (2 * unit(rng) - 1) * (i % 2 ? 1 : 4);
      double lat = std::clamp(shape.lat + reach * (2 * unit(rng) - 1), kLatMin, kLatMax);
      lon = std::fmod(lon + 540, 360) - 180;
      const uint64_t score = ScoreOf(lon, lat);
      double l, a, d;
      const bool in = WithinShape(shape, double(score), &l, &a, &d);
      for (uint8_t step = 1; step <= kStepMax; ++step) {
        const HashBits cell{score >> (52 - 2 * step), step};
        const bool may = CellMayHold(shape, cell);
        if (in) ASSERT_TRUE(may) << round << " " << i << " step " << int(step);
        refused_cells += !may;
      }
      accepted += in;
    }
  }
  EXPECT_GT(accepted, 10000u);
  EXPECT_GT(refused_cells, 100000u);  // and it does refuse cells
}

}  // namespace
}  // namespace damselfly::core::geo
