// Geo commands through the Service, with 1, 2 and 4 shards (test_utils.h): the replies and
// error texts of Redis 7.0 (each checked against redis-server 7.0.15; tests/test_geo.py
// checks the wire), both sorted-set encodings, and the stores across shards.
#include <string>
#include <vector>

#include "src/server/test_utils.h"

namespace damselfly {
namespace {

using testing::ElementsAre;

class GeoFamilyTest : public ServiceTest {
 protected:
  void SetUp() override {
    ServiceTest::SetUp();
    a_ = KeyOnShard(0, "a");
    b_ = KeyOnShard(num_shards() - 1, "b");
  }
  void TearDown() override {
    Run({"config", "set", "zset-max-listpack-entries", "128"});
    ServiceTest::TearDown();
  }
  void AddSicily(std::string_view key) {
    EXPECT_EQ(Run({"geoadd", key, "13.361389", "38.115556", "Palermo", "15.087269", "37.502669",
                   "Catania"}),
              2);
  }

  std::string a_, b_;
};

TEST_P(GeoFamilyTest, AddPosHashDist) {
  for (int entries : {128, 0}) {
    SCOPED_TRACE(entries);
    Run({"del", "Sicily"});
    Run({"config", "set", "zset-max-listpack-entries", std::to_string(entries)});
    AddSicily("Sicily");
    EXPECT_EQ(Run({"object", "encoding", "Sicily"}), entries ? "listpack" : "skiplist");
    EXPECT_EQ(Run({"zscore", "Sicily", "Palermo"}), "3479099956230698");
    EXPECT_THAT(
        Run({"geopos", "Sicily", "Palermo", "nope"}),
        RespArray(ElementsAre(
            RespArray(ElementsAre("13.36138933897018433", "38.11555639549629859")), IsNil())));
    EXPECT_THAT(Run({"geohash", "Sicily", "Palermo", "Catania", "nope"}),
                RespArray(ElementsAre("sqc8b49rny0", "sqdtr74hyu0", IsNil())));
    EXPECT_EQ(Run({"geodist", "Sicily", "Palermo", "Catania"}), "166274.1516");
    EXPECT_EQ(Run({"geodist", "Sicily", "Palermo", "Catania", "KM"}), "166.2742");
    EXPECT_EQ(Run({"geodist", "Sicily", "Palermo", "Catania", "mi"}), "103.3182");
    EXPECT_THAT(Run({"geodist", "Sicily", "Palermo", "nope"}), IsNil());
  }
  EXPECT_THAT(Run({"geodist", "nokey", "a", "b"}), IsNil());
  EXPECT_THAT(Run({"geopos", "nokey", "a"}), RespArray(ElementsAre(IsNil())));
  EXPECT_THAT(Run({"geopos", "nokey"}), ArrLen(0));
}

TEST_P(GeoFamilyTest, AddOptionsAndErrors) {
  EXPECT_EQ(Run({"geoadd", "k", "1", "2", "m"}), 1);
  EXPECT_EQ(Run({"geoadd", "k", "xx", "3", "4", "m", "5", "6", "n"}), 0);
  EXPECT_EQ(Run({"zcard", "k"}), 1);
  EXPECT_EQ(Run({"geoadd", "k", "nx", "ch", "7", "8", "m", "5", "6", "n"}), 1);
  EXPECT_EQ(Run({"geoadd", "k", "ch", "7", "8", "m", "5", "6", "n"}), 1);
  EXPECT_EQ(Run({"geoadd", "k", "ch", "1", "1", "m", "5", "6", "n", "9", "9", "o"}), 2);
  EXPECT_EQ(Run({"geoadd", "k", "xx", "1", "2", "new"}), 0);
  EXPECT_EQ(Run({"geoadd", "xxkey", "xx", "1", "2", "new"}), 0);
  EXPECT_EQ(Run({"exists", "xxkey"}), 0);

  EXPECT_THAT(Run({"geoadd", "k", "200", "100", "x"}),
              ErrArg("ERR invalid longitude,latitude pair 200.000000,100.000000"));
  EXPECT_THAT(Run({"geoadd", "k", "0", "85.06", "x"}),
              ErrArg("ERR invalid longitude,latitude pair 0.000000,85.060000"));
  EXPECT_THAT(Run({"geoadd", "k", "abc", "1", "x"}), ErrArg("ERR value is not a valid float"));
  EXPECT_THAT(Run({"geoadd", "k", "nan", "1", "x"}), ErrArg("ERR value is not a valid float"));
  EXPECT_THAT(Run({"geoadd", "k", "1", "2", "x", "3"}), ErrArg("ERR syntax error"));
  EXPECT_THAT(Run({"geoadd", "k", "nx", "xx", "1", "2", "x"}), ErrArg("ERR syntax error"));
  EXPECT_THAT(Run({"geoadd", "k", "nx", "ch", "xx"}), ErrArg("ERR syntax error"));
  EXPECT_THAT(Run({"geoadd", "k", "1", "2"}), ErrArg(ArityError("geoadd")));
  EXPECT_THAT(Run({"geodist", "k", "m"}), ErrArg(ArityError("geodist")));
  EXPECT_THAT(Run({"geodist", "k", "m", "n", "km", "x"}), ErrArg("ERR syntax error"));
  EXPECT_THAT(Run({"geodist", "k", "m", "n", "yards"}),
              ErrArg("ERR unsupported unit provided. please use M, KM, FT, MI"));

  Run({"set", "str", "v"});
  EXPECT_THAT(Run({"geoadd", "str", "1", "2", "x"}), ErrArg(kWrongTypeText));
  EXPECT_THAT(Run({"geopos", "str", "x"}), ErrArg(kWrongTypeText));
  EXPECT_THAT(Run({"geohash", "str", "x"}), ErrArg(kWrongTypeText));
  EXPECT_THAT(Run({"geodist", "str", "x", "y"}), ErrArg(kWrongTypeText));
  EXPECT_THAT(Run({"geosearch", "str", "fromlonlat", "0", "0", "byradius", "1", "m"}),
              ErrArg(kWrongTypeText));
  EXPECT_THAT(Run({"georadius", "str", "0", "0", "1", "m"}), ErrArg(kWrongTypeText));
}

TEST_P(GeoFamilyTest, Searches) {
  AddSicily("Sicily");
  EXPECT_THAT(Run({"georadius", "Sicily", "15", "37", "200", "km", "withdist", "asc"}),
              RespArray(ElementsAre(RespArray(ElementsAre("Catania", "56.4413")),
                                    RespArray(ElementsAre("Palermo", "190.4424")))));
  EXPECT_THAT(Run({"georadius_ro", "Sicily", "15", "37", "200", "km", "withcoord", "withhash",
                   "desc", "count", "1"}),
              RespArray(ElementsAre(RespArray(ElementsAre(
                  "Palermo", 3479099956230698,
                  RespArray(ElementsAre("13.36138933897018433", "38.11555639549629859")))))));
  EXPECT_THAT(Run({"georadiusbymember", "Sicily", "Palermo", "200", "km"}),
              RespArray(ElementsAre("Palermo", "Catania")));
  EXPECT_THAT(Run({"geosearch", "Sicily", "frommember", "Palermo", "bybox", "400", "400", "km",
                   "asc", "withdist"}),
              RespArray(ElementsAre(RespArray(ElementsAre("Palermo", "0.0000")),
                                    RespArray(ElementsAre("Catania", "166.2742")))));
  EXPECT_THAT(Run({"geosearch", "Sicily", "fromlonlat", "15", "37", "byradius", "100", "km"}),
              RespArray(ElementsAre("Catania")));
  EXPECT_THAT(Run({"geosearch", "Sicily", "fromlonlat", "15", "37", "byradius", "1", "km"}),
              ArrLen(0));
  EXPECT_THAT(Run({"geosearch", "nokey", "frommember", "x", "byradius", "1", "km"}), ArrLen(0));
  EXPECT_THAT(Run({"georadiusbymember", "nokey", "x", "bad", "km"}), ArrLen(0));
  EXPECT_THAT(Run({"geosearch", "Sicily", "frommember", "nope", "byradius", "1", "km"}),
              ErrArg("ERR could not decode requested zset member"));
  EXPECT_THAT(Run({"geosearch", "Sicily", "byradius", "1", "km", "asc", "desc"}),
              ErrArg("ERR exactly one of FROMMEMBER or FROMLONLAT can be specified for geosearch"));
  EXPECT_THAT(Run({"geosearch", "Sicily", "frommember", "Palermo", "withdist", "asc", "withhash"}),
              ErrArg("ERR exactly one of BYRADIUS and BYBOX can be specified for geosearch"));
  EXPECT_THAT(Run({"geosearch", "Sicily", "frommember", "Palermo", "byradius", "1", "km", "any"}),
              ErrArg("ERR the ANY argument requires COUNT argument"));
  EXPECT_THAT(Run({"georadius", "Sicily", "15", "37", "200", "km", "store", "x", "withdist"}),
              ErrArg("ERR STORE option in GEORADIUS is not compatible with WITHDIST, WITHHASH "
                     "and WITHCOORD options"));
  EXPECT_THAT(Run({"georadius_ro", "Sicily", "15", "37", "200", "km", "store", "x"}),
              ErrArg("ERR syntax error"));
}

TEST_P(GeoFamilyTest, StoresAcrossShards) {
  AddSicily(a_);
  EXPECT_EQ(Run({"georadius", a_, "15", "37", "200", "km", "store", b_}), 2);
  EXPECT_THAT(Run({"zrange", b_, "0", "-1", "withscores"}),
              RespArray(ElementsAre("Palermo", "3479099956230698", "Catania", "3479447370796909")));
  EXPECT_EQ(Run({"georadiusbymember", a_, "Palermo", "200", "km", "storedist", b_}), 2);
  EXPECT_THAT(Run({"zrange", b_, "0", "-1", "withscores"}),
              RespArray(ElementsAre("Palermo", "0", "Catania", "166.27415156960032")));
  EXPECT_EQ(Run({"geosearchstore", b_, a_, "fromlonlat", "15", "37", "byradius", "100", "km",
                 "storedist"}),
            1);
  EXPECT_THAT(Run({"zrange", b_, "0", "-1", "withscores"}),
              RespArray(ElementsAre("Catania", "56.441257870158204")));
  EXPECT_EQ(Run({"geosearchstore", b_, a_, "fromlonlat", "15", "37", "byradius", "1", "km"}), 0);
  EXPECT_EQ(Run({"exists", b_}), 0);
  Run({"set", b_, "x"});
  EXPECT_EQ(Run({"geosearchstore", b_, "nokey", "frommember", "x", "byradius", "1", "km"}), 0);
  EXPECT_EQ(Run({"exists", b_}), 0);
  EXPECT_THAT(
      Run({"geosearchstore", b_, a_, "fromlonlat", "15", "37", "byradius", "1", "km", "withcoord"}),
      ErrArg("ERR GEOSEARCHSTORE is not compatible with WITHDIST, WITHHASH and WITHCOORD "
             "options"));
}

INSTANTIATE_SHARD_COUNTS(GeoFamilyTest);

}  // namespace
}  // namespace damselfly
