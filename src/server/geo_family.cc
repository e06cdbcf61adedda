#include "src/server/geo_family.h"

#include <algorithm>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "src/core/geohash.h"
#include "src/facade/conn_context.h"
#include "src/facade/error.h"
#include "src/server/arg_parsing.h"
#include "src/server/engine_shard_set.h"
#include "src/server/family_utils.h"
#include "src/server/transaction.h"
#include "src/server/zset_family.h"
#include "src/server/zset_object.h"

namespace damselfly {

namespace {

namespace geo = core::geo;
using facade::CmdArgList;
using facade::ConnectionContext;
using facade::ReplyBuilder;

constexpr char kUnitErr[] = "ERR unsupported unit provided. please use M, KM, FT, MI";
constexpr char kMemberErr[] = "ERR could not decode requested zset member";

// --- Arguments.

// Meters per unit; nullopt for an unknown unit.
std::optional<double> ParseUnit(std::string_view unit) {
  if (ArgIs(unit, "M")) return 1;
  if (ArgIs(unit, "KM")) return 1000;
  if (ArgIs(unit, "FT")) return 0.3048;
  if (ArgIs(unit, "MI")) return 1609.34;
  return std::nullopt;
}

// A longitude and a latitude within the storable limits, or Redis's error text.
std::string ParseLonLat(std::string_view lon_text, std::string_view lat_text, double* lon,
                        double* lat) {
  std::optional<double> x = ParseDouble(lon_text);
  if (!x) return facade::kInvalidFloatErr;
  std::optional<double> y = ParseDouble(lat_text);
  if (!y) return facade::kInvalidFloatErr;
  if (*x < geo::kLongMin || *x > geo::kLongMax || *y < geo::kLatMin || *y > geo::kLatMax) {
    char buf[128];
    snprintf(buf, sizeof(buf), "ERR invalid longitude,latitude pair %f,%f", *x, *y);
    return buf;
  }
  *lon = *x;
  *lat = *y;
  return {};
}

// "radius unit" into the shape, or Redis's error text.
std::string ParseRadius(std::string_view radius_text, std::string_view unit, geo::Shape* shape) {
  std::optional<double> radius = ParseDouble(radius_text);
  if (!radius) return "ERR need numeric radius";
  if (*radius < 0) return "ERR radius cannot be negative";
  std::optional<double> conversion = ParseUnit(unit);
  if (!conversion) return kUnitErr;
  shape->type = geo::Shape::kCircle;
  shape->radius = *radius;
  shape->conversion = *conversion;
  return {};
}

// "width height unit" into the shape, or Redis's error text.
std::string ParseBox(CmdArgList args, size_t at, geo::Shape* shape) {
  std::optional<double> width = ParseDouble(args[at]);
  if (!width) return "ERR need numeric width";
  std::optional<double> height = ParseDouble(args[at + 1]);
  if (!height) return "ERR need numeric height";
  if (*height < 0 || *width < 0) return "ERR height or width cannot be negative";
  std::optional<double> conversion = ParseUnit(args[at + 2]);
  if (!conversion) return kUnitErr;
  shape->type = geo::Shape::kBox;
  shape->width = *width;
  shape->height = *height;
  shape->conversion = *conversion;
  return {};
}

// --- Replies.

// A distance as Redis prints it: 4 decimals, as a bulk string.
void SendDistance(ReplyBuilder* rb, double distance) {
  char buf[128];
  int len = snprintf(buf, sizeof(buf), "%.4f", distance);
  rb->SendBulk(std::string_view(buf, len));
}

// A coordinate as GEOPOS and WITHCOORD print it: the long double with 17 decimals, trailing
// zeros cut (a RESP3 double).
void SendCoordinate(ReplyBuilder* rb, double value) { rb->SendDoubleText(FormatLongDouble(value)); }

// --- Shard code.

// The sorted set under `key`, or nullopt when missing.
OpResult<std::optional<ZSetView>> FindGeoSet(DbIndex db, std::string_view key) {
  OpResult<const PrimeValue*> value = Slice().FindTyped(db, key, ObjType::kZSet);
  if (value.status() == OpStatus::kKeyNotFound) return std::optional<ZSetView>();
  if (!value) return value.status();
  return std::optional<ZSetView>(std::in_place, **value);
}

// The scores of `members` (nullopt: absent, or the key is missing).
OpResult<std::vector<std::optional<double>>> OpScores(DbIndex db, std::string_view key,
                                                      CmdArgList members) {
  OpResult<std::optional<ZSetView>> zset = FindGeoSet(db, key);
  if (!zset) return zset.status();
  std::vector<std::optional<double>> scores(members.size());
  if (!zset->has_value()) return scores;
  for (size_t i = 0; i < members.size(); ++i) scores[i] = (*zset)->Score(members[i]);
  return scores;
}

// --- Searches.

// Which command a search runs for (Redis's georadiusGeneric flags).
enum SearchFlags : unsigned {
  kFromCoords = 1,    // GEORADIUS: key lon lat radius unit
  kFromMember = 2,    // GEORADIUSBYMEMBER: key member radius unit
  kNoStore = 4,       // the _RO forms
  kSearch = 8,        // GEOSEARCH: FROMMEMBER/FROMLONLAT, BYRADIUS/BYBOX
  kSearchStore = 16,  // GEOSEARCHSTORE: dst src, then as GEOSEARCH
};

struct GeoPoint {
  std::string member;
  double score, distance, lon, lat;  // distance in meters until the reply converts it
};

struct SearchQuery {
  geo::Shape shape;
  bool withdist = false, withhash = false, withcoord = false, any = false;
  enum Sort { kNone, kAsc, kDesc } sort = kNone;
  int64_t count = 0;     // 0: all
  size_t store_key = 0;  // argument position of the destination, 0: none
  bool storedist = false;
};

// What a search's read found: an error to reply, or the query and its points (sorted and
// cut to COUNT; none when the key does not exist).
struct SearchOutcome {
  std::string error;
  SearchQuery query;
  std::vector<GeoPoint> points;
};

// Appends the members with scores in ranks [first, last) that lie in the shape, stopping
// once there are `limit` points (0: no limit). Returns false when it stopped there.
bool CollectRanks(const ZSetView& zset, size_t first, size_t last, const geo::Shape& shape,
                  size_t limit, std::vector<GeoPoint>* points) {
  bool more = true;
  zset.Walk(first, last, false, [&](std::string_view member, double score) {
    double lon, lat, distance;
    if (geo::WithinShape(shape, score, &lon, &lat, &distance)) {
      points->push_back({std::string(member), score, distance, lon, lat});
    }
    more = !(limit && points->size() >= limit);
    return more;
  });
  return more;
}

size_t RankOf(const ZSetView& zset, uint64_t score) {
  return zset.CountScoreBelow({double(score), false});
}

// Appends the members whose scores fall in the cell `hash` (scores in [its hash, the next
// hash) at 52 bits) and that lie in the shape, in score order, stopping once there are
// `limit` points. A cell that holds many members is read by its 16 sub-cells (two steps
// finer, contiguous score ranges in the same order), skipping those no point of the
// shape can fall in: the same points, in the same order, as reading all of it, with a
// fraction of the candidates.
void CollectCell(const ZSetView& zset, geo::HashBits hash, const geo::Shape& shape, size_t limit,
                 std::vector<GeoPoint>* points) {
  // Fewer members than this are cheaper to test than 16 sub-cells.
  constexpr size_t kRefineAbove = 48;
  constexpr uint8_t kSubSteps = 2;
  const uint64_t low = geo::Align52Bits(hash);
  const uint64_t high = geo::Align52Bits({hash.bits + 1, hash.step});
  const size_t first = RankOf(zset, low), last = RankOf(zset, high);
  if (first >= last) return;
  // Refine only within the 52 bits (an edge cell's range can pass them: its sub-cells'
  // areas would lie past the limits its points are clamped to).
  if (last - first <= kRefineAbove || hash.step + kSubSteps > geo::kStepMax ||
      high > (uint64_t{1} << 52)) {
    CollectRanks(zset, first, last, shape, limit, points);
    return;
  }
  const uint8_t sub_step = hash.step + kSubSteps;
  // A run of consecutive sub-cells to read, as a score range [run_low, run_high).
  uint64_t run_low = 0, run_high = 0;
  auto flush = [&] {
    if (run_low == run_high) return true;
    const size_t from = run_low == low ? first : RankOf(zset, run_low);
    const size_t to = run_high == high ? last : RankOf(zset, run_high);
    run_low = run_high = 0;
    return from >= to || CollectRanks(zset, from, to, shape, limit, points);
  };
  for (uint64_t i = 0; i < (uint64_t{1} << (2 * kSubSteps)); ++i) {
    const geo::HashBits sub{(hash.bits << (2 * kSubSteps)) | i, sub_step};
    if (!geo::CellMayHold(shape, sub)) {
      if (!flush()) return;
      continue;
    }
    const uint64_t sub_low = geo::Align52Bits(sub);
    if (run_low == run_high) run_low = sub_low;
    run_high = geo::Align52Bits({sub.bits + 1, sub_step});
  }
  flush();
}

// The members in the shape, from the centre cell and the neighbours the area reaches, in
// Redis's order (centre, N, S, E, W, NE, NW, SE, SW; by score within a cell).
std::vector<GeoPoint> CollectShape(const ZSetView& zset, geo::Shape* shape, size_t limit) {
  const geo::SearchBoxes boxes = geo::SearchAreas(shape);
  const geo::Neighbors& n = boxes.neighbors;
  const geo::HashBits cells[9] = {boxes.hash,   n.north,      n.south,      n.east,      n.west,
                                  n.north_east, n.north_west, n.south_east, n.south_west};
  std::vector<GeoPoint> points;
  const geo::HashBits* last_read = nullptr;
  for (const geo::HashBits& cell : cells) {
    if (cell.IsZero()) continue;
    // With huge radii adjacent neighbours can be the same cell: read it once.
    if (last_read != nullptr && last_read != &cells[0] && cell == *last_read) continue;
    if (limit && points.size() >= limit) break;
    CollectCell(zset, cell, *shape, limit, &points);
    last_read = &cell;
  }
  return points;
}

// Parses the search's arguments after the key's lookup (a FROMMEMBER reads the set, and
// Redis reports its errors in argument order) and runs it.
SearchOutcome OpSearch(DbIndex db, CmdArgList args, unsigned flags) {
  SearchOutcome out;
  SearchQuery& q = out.query;
  const size_t source = (flags & kSearchStore) ? 2 : 1;
  OpResult<std::optional<ZSetView>> found = FindGeoSet(db, args[source]);
  if (!found) {
    out.error = OpStatusError(found.status());
    return out;
  }
  const std::optional<ZSetView>& zset = *found;

  size_t base;
  if (flags & kFromCoords) {
    base = 6;
    out.error = ParseLonLat(args[2], args[3], &q.shape.lon, &q.shape.lat);
    if (out.error.empty()) out.error = ParseRadius(args[4], args[5], &q.shape);
    if (!out.error.empty()) return out;
  } else if (flags & kFromMember) {
    // A missing key skips the member and the radius: the reply is empty (or 0) anyway.
    base = 5;
    if (zset) {
      std::optional<double> score = zset->Score(args[2]);
      if (!score) {
        out.error = kMemberErr;
        return out;
      }
      geo::DecodeScore(*score, &q.shape.lon, &q.shape.lat);
      out.error = ParseRadius(args[3], args[4], &q.shape);
      if (!out.error.empty()) return out;
    }
  } else {
    base = source + 1;
    if (flags & kSearchStore) q.store_key = 1;
  }

  bool frommember = false, fromlonlat = false, byradius = false, bybox = false;
  const bool search = flags & (kSearch | kSearchStore);
  const bool may_store = !(flags & kNoStore) && !search;
  for (size_t i = base; i < args.size(); ++i) {
    std::string_view arg = args[i];
    const size_t remaining = args.size() - i - 1;  // arguments after this one
    if (ArgIs(arg, "WITHDIST")) {
      q.withdist = true;
    } else if (ArgIs(arg, "WITHHASH")) {
      q.withhash = true;
    } else if (ArgIs(arg, "WITHCOORD")) {
      q.withcoord = true;
    } else if (ArgIs(arg, "ANY")) {
      q.any = true;
    } else if (ArgIs(arg, "ASC")) {
      q.sort = SearchQuery::kAsc;
    } else if (ArgIs(arg, "DESC")) {
      q.sort = SearchQuery::kDesc;
    } else if (ArgIs(arg, "COUNT") && remaining >= 1) {
      std::optional<int64_t> count = ParseInt64(args[++i]);
      if (!count) {
        out.error = facade::kInvalidIntErr;
        return out;
      }
      if (*count <= 0) {
        out.error = "ERR COUNT must be > 0";
        return out;
      }
      q.count = *count;
    } else if (may_store && ArgIs(arg, "STORE") && remaining >= 1) {
      q.store_key = ++i;
      q.storedist = false;
    } else if (may_store && ArgIs(arg, "STOREDIST") && remaining >= 1) {
      q.store_key = ++i;
      q.storedist = true;
    } else if ((flags & kSearchStore) && ArgIs(arg, "STOREDIST")) {
      q.storedist = true;
    } else if (search && !fromlonlat && ArgIs(arg, "FROMMEMBER") && remaining >= 1) {
      ++i;
      frommember = true;
      if (!zset) continue;  // reported below as an empty result
      std::optional<double> score = zset->Score(args[i]);
      if (!score) {
        out.error = kMemberErr;
        return out;
      }
      geo::DecodeScore(*score, &q.shape.lon, &q.shape.lat);
    } else if (search && !frommember && ArgIs(arg, "FROMLONLAT") && remaining >= 2) {
      out.error = ParseLonLat(args[i + 1], args[i + 2], &q.shape.lon, &q.shape.lat);
      if (!out.error.empty()) return out;
      fromlonlat = true;
      i += 2;
    } else if (search && !bybox && ArgIs(arg, "BYRADIUS") && remaining >= 2) {
      out.error = ParseRadius(args[i + 1], args[i + 2], &q.shape);
      if (!out.error.empty()) return out;
      byradius = true;
      i += 2;
    } else if (search && !byradius && ArgIs(arg, "BYBOX") && remaining >= 3) {
      out.error = ParseBox(args, i + 1, &q.shape);
      if (!out.error.empty()) return out;
      bybox = true;
      i += 3;
    } else {
      out.error = facade::kSyntaxErr;
      return out;
    }
  }

  if (q.store_key && (q.withdist || q.withhash || q.withcoord)) {
    out.error = absl::StrCat(
        "ERR ", (flags & kSearchStore) ? "GEOSEARCHSTORE" : "STORE option in GEORADIUS",
        " is not compatible with WITHDIST, WITHHASH and WITHCOORD options");
    return out;
  }
  if (search && !frommember && !fromlonlat) {
    out.error = "ERR exactly one of FROMMEMBER or FROMLONLAT can be specified for ";
    out.error.append(args[0]);
    return out;
  }
  if (search && !byradius && !bybox) {
    out.error = "ERR exactly one of BYRADIUS and BYBOX can be specified for ";
    out.error.append(args[0]);
    return out;
  }
  if (q.any && q.count == 0) {
    out.error = "ERR the ANY argument requires COUNT argument";
    return out;
  }
  if (!zset) return out;

  // COUNT keeps the nearest ones, unless ANY asked for the first found.
  if (q.count && q.sort == SearchQuery::kNone && !q.any) q.sort = SearchQuery::kAsc;
  out.points = CollectShape(*zset, &q.shape, q.any ? q.count : 0);
  const size_t returned =
      q.count ? std::min<size_t>(out.points.size(), q.count) : out.points.size();
  if (q.sort != SearchQuery::kNone) {
    auto by_distance = [desc = q.sort == SearchQuery::kDesc](const GeoPoint& a, const GeoPoint& b) {
      return desc ? a.distance > b.distance : a.distance < b.distance;
    };
    if (returned == out.points.size()) {
      std::stable_sort(out.points.begin(), out.points.end(), by_distance);
    } else {
      std::partial_sort(out.points.begin(), out.points.begin() + returned, out.points.end(),
                        by_distance);
    }
  }
  out.points.resize(returned);
  return out;
}

void ReplyPoints(ReplyBuilder* rb, const SearchQuery& q, const std::vector<GeoPoint>& points) {
  const size_t options = q.withdist + q.withhash + q.withcoord;
  rb->StartArray(points.size());
  for (const GeoPoint& p : points) {
    if (options) rb->StartArray(options + 1);
    rb->SendBulk(p.member);
    if (q.withdist) SendDistance(rb, p.distance / q.shape.conversion);
    if (q.withhash) rb->SendLong(static_cast<int64_t>(p.score));
    if (q.withcoord) {
      rb->StartArray(2);
      SendCoordinate(rb, p.lon);
      SendCoordinate(rb, p.lat);
    }
  }
}

// The destination's sorted set: the points by hash, or by distance in the query's unit
// (STOREDIST), in (score, member) order.
ZSetView::SortedPairs StoredPairs(const SearchQuery& q, const std::vector<GeoPoint>& points) {
  ZSetView::SortedPairs pairs;
  pairs.reserve(points.size());
  for (const GeoPoint& p : points) {
    pairs.emplace_back(p.member, q.storedist ? p.distance / q.shape.conversion : p.score);
  }
  std::sort(pairs.begin(), pairs.end(), [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second < b.second : a.first < b.first;
  });
  // A member found in two cells (possible only with the coarsest cells) is stored once.
  pairs.erase(std::unique(pairs.begin(), pairs.end(),
                          [](const auto& a, const auto& b) { return a.first == b.first; }),
              pairs.end());
  return pairs;
}

// Every search command: the _RO forms and GEOSEARCH read on the key's shard; the others
// run a CommandTransaction (inline when one shard holds every key) whose second hop
// writes the destination when there is one.
void SearchGeneric(CmdArgList args, ConnectionContext* cntx, unsigned flags) {
  ReplyBuilder* rb = cntx->reply_builder();
  if ((flags & kNoStore) || (flags & kSearch)) {
    SearchOutcome out = OpSearch(cntx->db_index, args, flags);
    if (!out.error.empty()) return rb->SendError(out.error);
    return ReplyPoints(rb, out.query, out.points);
  }
  CommandTransaction tx(args, cntx);
  const ShardId source_shard = shard_set->ShardOf(args[(flags & kSearchStore) ? 2 : 1]);
  SearchOutcome out;
  tx->Execute(
      [&](Transaction* t, EngineShard* shard) {
        if (shard->shard_id() == source_shard) out = OpSearch(t->db(), args, flags);
      },
      false);
  if (!out.error.empty()) return rb->SendError(out.error);  // concludes without a write
  if (!out.query.store_key) return ReplyPoints(rb, out.query, out.points);
  const std::string_view destination = args[out.query.store_key];
  const ShardId destination_shard = shard_set->ShardOf(destination);
  const ZSetView::SortedPairs pairs = StoredPairs(out.query, out.points);
  const std::string_view event = (flags & kSearchStore) ? "geosearchstore" : "georadiusstore";
  tx->Execute(
      [&](Transaction* t, EngineShard* shard) {
        if (shard->shard_id() == destination_shard) {
          ZSetFamily::Store(t->db(), destination, pairs, event);
        }
      },
      true);
  rb->SendLong(out.points.size());
}

// --- Handlers.

// GEOADD key [NX | XX] [CH] longitude latitude member [longitude latitude member ...]
void CmdGeoAdd(CmdArgList args, ConnectionContext* cntx) {
  ReplyBuilder* rb = cntx->reply_builder();
  ZSetFamily::AddFlags flags;
  size_t i = 2;
  for (; i < args.size(); ++i) {
    if (ArgIs(args[i], "NX")) {
      flags.nx = true;
    } else if (ArgIs(args[i], "XX")) {
      flags.xx = true;
    } else if (ArgIs(args[i], "CH")) {
      flags.ch = true;
    } else {
      break;
    }
  }
  // No triples at all is ZADD's syntax error in Redis, which hands GEOADD to ZADD.
  if ((args.size() - i) % 3 != 0 || i == args.size() || (flags.nx && flags.xx)) {
    return rb->SendError(facade::kSyntaxErr);
  }
  ZSetFamily::ScoreMembers pairs;
  for (; i < args.size(); i += 3) {
    double lon, lat;
    std::string error = ParseLonLat(args[i], args[i + 1], &lon, &lat);
    if (!error.empty()) return rb->SendError(error);
    pairs.emplace_back(double(geo::ScoreOf(lon, lat)), args[i + 2]);
  }
  OpResult<ZSetFamily::AddOutcome> out = ZSetFamily::Add(cntx->db_index, args[1], flags, pairs);
  if (!out) return SendOpError(rb, out.status());
  rb->SendLong(flags.ch ? out->added + out->updated : out->added);
}

// GEOPOS key [member ...]
void CmdGeoPos(CmdArgList args, ConnectionContext* cntx) {
  ReplyBuilder* rb = cntx->reply_builder();
  auto scores = OpScores(cntx->db_index, args[1], args.subspan(2));
  if (!scores) return SendOpError(rb, scores.status());
  rb->StartArray(scores->size());
  for (const std::optional<double>& score : *scores) {
    if (!score) {
      rb->SendNullArray();
      continue;
    }
    double lon, lat;
    geo::DecodeScore(*score, &lon, &lat);
    rb->StartArray(2);
    SendCoordinate(rb, lon);
    SendCoordinate(rb, lat);
  }
}

// GEOHASH key [member ...]
void CmdGeoHash(CmdArgList args, ConnectionContext* cntx) {
  ReplyBuilder* rb = cntx->reply_builder();
  auto scores = OpScores(cntx->db_index, args[1], args.subspan(2));
  if (!scores) return SendOpError(rb, scores.status());
  rb->StartArray(scores->size());
  for (const std::optional<double>& score : *scores) {
    if (score) {
      rb->SendBulk(geo::StandardGeohash(*score));
    } else {
      rb->SendNull();
    }
  }
}

// GEODIST key member1 member2 [M | KM | FT | MI]
void CmdGeoDist(CmdArgList args, ConnectionContext* cntx) {
  ReplyBuilder* rb = cntx->reply_builder();
  double to_meters = 1;
  if (args.size() == 5) {
    std::optional<double> unit = ParseUnit(args[4]);
    if (!unit) return rb->SendError(kUnitErr);
    to_meters = *unit;
  } else if (args.size() > 5) {
    return rb->SendError(facade::kSyntaxErr);
  }
  auto scores = OpScores(cntx->db_index, args[1], args.subspan(2, 2));
  if (!scores) return SendOpError(rb, scores.status());
  if (!(*scores)[0] || !(*scores)[1]) return rb->SendNull();
  double lon1, lat1, lon2, lat2;
  geo::DecodeScore(*(*scores)[0], &lon1, &lat1);
  geo::DecodeScore(*(*scores)[1], &lon2, &lat2);
  SendDistance(rb, geo::Distance(lon1, lat1, lon2, lat2) / to_meters);
}

void CmdGeoRadius(CmdArgList args, ConnectionContext* cntx) {
  SearchGeneric(args, cntx, kFromCoords);
}
void CmdGeoRadiusRo(CmdArgList args, ConnectionContext* cntx) {
  SearchGeneric(args, cntx, kFromCoords | kNoStore);
}
void CmdGeoRadiusByMember(CmdArgList args, ConnectionContext* cntx) {
  SearchGeneric(args, cntx, kFromMember);
}
void CmdGeoRadiusByMemberRo(CmdArgList args, ConnectionContext* cntx) {
  SearchGeneric(args, cntx, kFromMember | kNoStore);
}
void CmdGeoSearch(CmdArgList args, ConnectionContext* cntx) { SearchGeneric(args, cntx, kSearch); }
void CmdGeoSearchStore(CmdArgList args, ConnectionContext* cntx) {
  SearchGeneric(args, cntx, kSearchStore);
}

}  // namespace

void GeoFamily::Register(facade::CommandRegistry* registry) {
  using namespace facade;
  CommandRegistry& r = *registry;
  // The key read only for its metadata (type, length), updated in place, only added to,
  // only removed from, read and removed, overwritten unread, or written when missing: the
  // key flags Redis 7.0 gives (COMMAND INFO). Only RO changes locking (shared).
  const KeySpec kUpdated = Keys(1).WithFlags(kKeyRW | kKeyUpdate);
  constexpr uint32_t kWrite = kCmdWrite | kCmdDenyOom;
  constexpr uint32_t kAclW = kAclWrite | kAclGeo | kAclSlow;
  constexpr uint32_t kAclR = kAclRead | kAclGeo | kAclSlow;
  // GEORADIUS's destination follows STORE or STOREDIST, searched from the options on.
  auto store_keys = [](int options) {
    const uint32_t flags = kKeyOW | kKeyUpdate;
    return KeySpecs{Keys(1).WithFlags(kKeyRO | kKeyAccess),
                    KeySpec{.flags = flags, .begin_index = options, .keyword = "STORE"},
                    KeySpec{.flags = flags, .begin_index = options, .keyword = "STOREDIST"}};
  };
  const KeySpecs kSearchStoreKeys = {Keys(1).WithFlags(kKeyOW | kKeyUpdate),
                                     Keys(2).WithFlags(kKeyRO | kKeyAccess)};
  r.Add("GEOADD", -5, kWrite, kUpdated, kAclW, CmdGeoAdd);
  r.Add("GEOPOS", -2, kCmdReadOnly, Keys(1), kAclR, CmdGeoPos);
  r.Add("GEOHASH", -2, kCmdReadOnly, Keys(1), kAclR, CmdGeoHash);
  r.Add("GEODIST", -4, kCmdReadOnly, Keys(1), kAclR, CmdGeoDist);
  r.Add("GEORADIUS", -6, kWrite, store_keys(6), kAclW, CmdGeoRadius);
  r.Add("GEORADIUS_RO", -6, kCmdReadOnly, Keys(1), kAclR, CmdGeoRadiusRo);
  r.Add("GEORADIUSBYMEMBER", -5, kWrite, store_keys(5), kAclW, CmdGeoRadiusByMember);
  r.Add("GEORADIUSBYMEMBER_RO", -5, kCmdReadOnly, Keys(1), kAclR, CmdGeoRadiusByMemberRo);
  r.Add("GEOSEARCH", -7, kCmdReadOnly, Keys(1), kAclR, CmdGeoSearch);
  r.Add("GEOSEARCHSTORE", -8, kWrite, kSearchStoreKeys, kAclW, CmdGeoSearchStore);
}

}  // namespace damselfly
