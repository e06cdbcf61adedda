#include "src/server/command_docs_table.h"

namespace damselfly {

namespace {

using facade::CommandDoc;

// connection_family.cc
constexpr CommandDoc kConnectionDocs[] = {
    {"PING", "connection", "Ping the server", "1.0.0", "[message]"},
    {"ECHO", "connection", "Echo the given string", "1.0.0", "message"},
    {"QUIT", "connection", "Close the connection", "1.0.0", ""},
    {"RESET", "connection", "Reset the connection", "6.2.0", ""},
    {"HELLO", "connection", "Handshake with Redis", "6.0.0",
     "[protover [AUTH username password] [SETNAME clientname]]"},
    {"AUTH", "connection", "Authenticate to the server", "1.0.0", "[username] password"},
    {"SELECT", "connection", "Change the selected database for the current connection", "1.0.0",
     "index"},
    {"CLIENT", "connection", "A container for client connection commands", "2.4.0", ""},
    {.name = "CLIENT|ID"},
    {.name = "CLIENT|GETNAME"},
    {.name = "CLIENT|SETNAME", .syntax = "connection-name"},
    {.name = "CLIENT|SETINFO", .syntax = "LIB-NAME libname | LIB-VER libver"},
    {.name = "CLIENT|INFO"},
    {.name = "CLIENT|LIST",
     .syntax = "[TYPE NORMAL | MASTER | REPLICA | PUBSUB] [ID client-id [client-id ...]]"},
    {.name = "CLIENT|KILL",
     .syntax = "[ID client-id] [TYPE NORMAL | MASTER | SLAVE | REPLICA | PUBSUB] "
               "[USER username] [ADDR ip:port] [LADDR ip:port] [SKIPME YES | NO]"},
    {.name = "CLIENT|PAUSE", .syntax = "timeout [WRITE | ALL]"},
    {.name = "CLIENT|UNPAUSE"},
    {.name = "CLIENT|REPLY", .syntax = "ON | OFF | SKIP"},
    {.name = "CLIENT|NO-EVICT", .syntax = "ON | OFF"},
    {.name = "CLIENT|UNBLOCK", .syntax = "client-id [TIMEOUT | ERROR]"},
    {.name = "CLIENT|GETREDIR"},
    {.name = "CLIENT|TRACKING",
     .syntax = "ON | OFF [REDIRECT client-id] [PREFIX prefix [PREFIX prefix ...]] [BCAST] "
               "[OPTIN] [OPTOUT] [NOLOOP]"},
    {.name = "CLIENT|CACHING", .syntax = "YES | NO"},
    {.name = "CLIENT|TRACKINGINFO"},
    {.name = "CLIENT|HELP"},
};

// acl_family.cc
constexpr CommandDoc kAclDocs[] = {
    {"ACL", "server", "A container for Access List Control commands", "6.0.0", ""},
    {.name = "ACL|CAT", .syntax = "[categoryname]"},
    {.name = "ACL|DELUSER", .syntax = "username [username ...]"},
    {.name = "ACL|DRYRUN", .syntax = "username command [arg [arg ...]]"},
    {.name = "ACL|GENPASS", .syntax = "[bits]"},
    {.name = "ACL|GETUSER", .syntax = "username"},
    {.name = "ACL|HELP"},
    {.name = "ACL|LIST"},
    {.name = "ACL|LOAD"},
    {.name = "ACL|LOG", .syntax = "[count | RESET]"},
    {.name = "ACL|SAVE"},
    {.name = "ACL|SETUSER", .syntax = "username [rule [rule ...]]"},
    {.name = "ACL|USERS"},
    {.name = "ACL|WHOAMI"},
};

// replication_family.cc
constexpr CommandDoc kReplicationDocs[] = {
    {"SYNC", "server", "Internal command used for replication", "1.0.0", ""},
    {"PSYNC", "server", "Internal command used for replication", "2.8.0", "replicationid offset"},
    {"REPLCONF", "server", "An internal command for configuring the replication stream",
     "3.0.0", ""},
    {"ROLE", "server", "Return the role of the instance in the context of replication",
     "2.8.12", ""},
    {"WAIT", "generic",
     "Wait for the synchronous replication of all the write commands sent in the context of "
     "the current connection",
     "3.0.0", "numreplicas timeout"},
};

// standalone_family.cc
constexpr CommandDoc kStandaloneDocs[] = {
    {"REPLICAOF", "server",
     "Make the server a replica of another instance, or promote it as master.", "5.0.0",
     "host port"},
    {"SLAVEOF", "server",
     "Make the server a replica of another instance, or promote it as master.", "1.0.0",
     "host port"},
    {"FAILOVER", "server",
     "Start a coordinated failover between this server and one of its replicas.", "6.2.0",
     "[TO host port [FORCE]] [ABORT] [TIMEOUT milliseconds]"},
    {"READONLY", "cluster", "Enables read queries for a connection to a cluster replica node",
     "3.0.0", ""},
    {"READWRITE", "cluster", "Disables read queries for a connection to a cluster replica node",
     "3.0.0", ""},
    {"ASKING", "cluster", "Sent by cluster clients after an -ASK redirect", "3.0.0", ""},
    {"CLUSTER", "cluster", "A container for cluster commands", "3.0.0", ""},
    {.name = "CLUSTER|ADDSLOTS", .syntax = "slot [slot ...]"},
    {.name = "CLUSTER|ADDSLOTSRANGE", .syntax = "start-slot end-slot [start-slot end-slot ...]"},
    {.name = "CLUSTER|BUMPEPOCH"},
    {.name = "CLUSTER|COUNT-FAILURE-REPORTS", .syntax = "node-id"},
    {.name = "CLUSTER|COUNTKEYSINSLOT", .syntax = "slot"},
    {.name = "CLUSTER|DELSLOTS", .syntax = "slot [slot ...]"},
    {.name = "CLUSTER|DELSLOTSRANGE", .syntax = "start-slot end-slot [start-slot end-slot ...]"},
    {.name = "CLUSTER|FAILOVER", .syntax = "[FORCE | TAKEOVER]"},
    {.name = "CLUSTER|FLUSHSLOTS"},
    {.name = "CLUSTER|FORGET", .syntax = "node-id"},
    {.name = "CLUSTER|GETKEYSINSLOT", .syntax = "slot count"},
    {.name = "CLUSTER|HELP"},
    {.name = "CLUSTER|INFO"},
    {.name = "CLUSTER|KEYSLOT", .syntax = "key"},
    {.name = "CLUSTER|LINKS"},
    {.name = "CLUSTER|MEET", .syntax = "ip port [cluster-bus-port]"},
    {.name = "CLUSTER|MYID"},
    {.name = "CLUSTER|NODES"},
    {.name = "CLUSTER|REPLICAS", .syntax = "node-id"},
    {.name = "CLUSTER|REPLICATE", .syntax = "node-id"},
    {.name = "CLUSTER|RESET", .syntax = "[HARD | SOFT]"},
    {.name = "CLUSTER|SAVECONFIG"},
    {.name = "CLUSTER|SET-CONFIG-EPOCH", .syntax = "config-epoch"},
    {.name = "CLUSTER|SETSLOT",
     .syntax = "slot <IMPORTING node-id | MIGRATING node-id | NODE node-id | STABLE>"},
    {.name = "CLUSTER|SHARDS"},
    {.name = "CLUSTER|SLAVES", .syntax = "node-id"},
    {.name = "CLUSTER|SLOTS"},
    {"MODULE", "server", "A container for module commands", "4.0.0", ""},
    {.name = "MODULE|LIST"},
    {.name = "MODULE|LOAD", .syntax = "path [arg [arg ...]]"},
    {.name = "MODULE|LOADEX",
     .syntax = "path [CONFIG name value [CONFIG name value ...]] [ARGS args [args ...]]"},
    {.name = "MODULE|UNLOAD", .syntax = "name"},
    {.name = "MODULE|HELP"},
};

// bitops_family.cc
constexpr CommandDoc kBitmapDocs[] = {
    {"SETBIT", "bitmap", "Sets or clears the bit at offset in the string value stored at key",
     "2.2.0", "key offset value"},
    {"GETBIT", "bitmap", "Returns the bit value at offset in the string value stored at key",
     "2.2.0", "key offset"},
    {"BITCOUNT", "bitmap", "Count set bits in a string", "2.6.0", "key [start end [BYTE | BIT]]"},
    {"BITPOS", "bitmap", "Find first bit set or clear in a string", "2.8.7",
     "key bit [start [end [BYTE | BIT]]]"},
    {"BITOP", "bitmap", "Perform bitwise operations between strings", "2.6.0",
     "operation destkey key [key ...]"},
    {"BITFIELD", "bitmap", "Perform arbitrary bitfield integer operations on strings", "3.2.0",
     "key [GET encoding offset | [OVERFLOW WRAP | SAT | FAIL] SET encoding offset value | "
     "[OVERFLOW WRAP | SAT | FAIL] INCRBY encoding offset increment [GET encoding offset | "
     "[OVERFLOW WRAP | SAT | FAIL] SET encoding offset value | [OVERFLOW WRAP | SAT | FAIL] "
     "INCRBY encoding offset increment ...]]"},
    {"BITFIELD_RO", "bitmap",
     "Perform arbitrary bitfield integer operations on strings. Read-only variant of BITFIELD",
     "6.0.0", "key [GET encoding offset [GET encoding offset ...]]"},
};

// server_family.cc
constexpr CommandDoc kServerDocs[] = {
    {"INFO", "server", "Get information and statistics about the server", "1.0.0",
     "[section [section ...]]"},
    {"DBSIZE", "server", "Return the number of keys in the selected database", "1.0.0", ""},
    {"FLUSHDB", "server", "Remove all keys from the current database", "1.0.0", "[ASYNC | SYNC]"},
    {"FLUSHALL", "server", "Remove all keys from all databases", "1.0.0", "[ASYNC | SYNC]"},
    {"TIME", "server", "Return the current server time", "2.6.0", ""},
    {"SHUTDOWN", "server", "Synchronously save the dataset to disk and then shut down the server",
     "1.0.0", "[NOSAVE | SAVE] [NOW] [FORCE] [ABORT]"},
    {"MONITOR", "server", "Listen for all requests received by the server in real time", "1.0.0",
     ""},
    {"SAVE", "server", "Synchronously save the dataset to disk", "1.0.0", ""},
    {"BGREWRITEAOF", "server", "Asynchronously rewrite the append-only file", "1.0.0", ""},
    {"BGSAVE", "server", "Asynchronously save the dataset to disk", "1.0.0", "[SCHEDULE]"},
    {"LASTSAVE", "server", "Get the UNIX time stamp of the last successful save to disk",
     "1.0.0", ""},
    {"COMMAND", "server", "Get array of Redis command details", "2.8.13", ""},
    {.name = "COMMAND|COUNT"},
    {.name = "COMMAND|INFO", .syntax = "[command-name [command-name ...]]"},
    {.name = "COMMAND|DOCS", .syntax = "[command-name [command-name ...]]"},
    {.name = "COMMAND|LIST"},
    {.name = "COMMAND|GETKEYS", .syntax = "command [arg [arg ...]]"},
    {.name = "COMMAND|GETKEYSANDFLAGS", .syntax = "command [arg [arg ...]]"},
    {.name = "COMMAND|HELP"},
};

// stream_family.cc
constexpr CommandDoc kStreamDocs[] = {
    {"XADD", "stream", "Appends a new entry to a stream", "5.0.0",
     "key [NOMKSTREAM] [<MAXLEN | MINID> [= | ~] threshold [LIMIT count]] <* | id> field value "
     "[field value ...]"},
    {"XRANGE", "stream", "Return a range of elements in a stream, with IDs matching the specified "
     "IDs interval", "5.0.0", "key start end [COUNT count]"},
    {"XREVRANGE", "stream", "Return a range of elements in a stream, with IDs matching the "
     "specified IDs interval, in reverse order (from greater to smaller IDs) compared to XRANGE",
     "5.0.0", "key end start [COUNT count]"},
    {"XLEN", "stream", "Return the number of entries in a stream", "5.0.0", "key"},
    {"XDEL", "stream", "Removes the specified entries from the stream. Returns the number of "
     "items actually deleted, that may be different from the number of IDs passed in case "
     "certain IDs do not exist.", "5.0.0", "key id [id ...]"},
    {"XTRIM", "stream", "Trims the stream to (approximately if '~' is passed) a certain size",
     "5.0.0", "key <MAXLEN | MINID> [= | ~] threshold [LIMIT count]"},
    {"XSETID", "stream", "An internal command for replicating stream values", "5.0.0",
     "key last-id [ENTRIESADDED entries-added] [MAXDELETEDID max-deleted-id]"},
    {"XREAD", "stream", "Return never seen elements in multiple streams, with IDs greater than "
     "the ones reported by the caller for each stream. Can block.", "5.0.0",
     "[COUNT count] [BLOCK milliseconds] STREAMS key [key ...] id [id ...]"},
    {"XGROUP", "stream", "A container for consumer groups commands", "5.0.0", ""},
    {.name = "XGROUP|CREATE",
     .syntax = "key groupname <id | $> [MKSTREAM] [ENTRIESREAD entries-read]"},
    {.name = "XGROUP|SETID", .syntax = "key groupname <id | $> [ENTRIESREAD entries-read]"},
    {.name = "XGROUP|DESTROY", .syntax = "key groupname"},
    {.name = "XGROUP|CREATECONSUMER", .syntax = "key groupname consumername"},
    {.name = "XGROUP|DELCONSUMER", .syntax = "key groupname consumername"},
    {.name = "XGROUP|HELP"},
    {"XREADGROUP", "stream", "Return new entries from a stream using a consumer group, or "
     "access the history of the pending entries for a given consumer. Can block.", "5.0.0",
     "GROUP group consumer [COUNT count] [BLOCK milliseconds] [NOACK] STREAMS key [key ...] "
     "id [id ...]"},
    {"XACK", "stream", "Marks a pending message as correctly processed, effectively removing it "
     "from the pending entries list of the consumer group. Return value of the command is the "
     "number of messages successfully acknowledged, that is, the IDs we were actually able to "
     "resolve in the PEL.", "5.0.0", "key group id [id ...]"},
    {"XPENDING", "stream", "Return information and entries from a stream consumer group pending "
     "entries list, that are messages fetched but never acknowledged.", "5.0.0",
     "key group [[IDLE min-idle-time] start end count [consumer]]"},
    {"XCLAIM", "stream", "Changes (or acquires) ownership of a message in a consumer group, as "
     "if the message was delivered to the specified consumer.", "5.0.0",
     "key group consumer min-idle-time id [id ...] [IDLE ms] [TIME unix-time-milliseconds] "
     "[RETRYCOUNT count] [FORCE] [JUSTID] [LASTID lastid]"},
    {"XAUTOCLAIM", "stream", "Changes (or acquires) ownership of messages in a consumer group, "
     "as if the messages were delivered to the specified consumer.", "6.2.0",
     "key group consumer min-idle-time start [COUNT count] [JUSTID]"},
    {"XINFO", "stream", "A container for stream introspection commands", "5.0.0", ""},
    {.name = "XINFO|CONSUMERS", .syntax = "key groupname"},
    {.name = "XINFO|GROUPS", .syntax = "key"},
    {.name = "XINFO|STREAM", .syntax = "key [FULL [COUNT count]]"},
    {.name = "XINFO|HELP"},
};

// pubsub_family.cc
constexpr CommandDoc kPubSubDocs[] = {
    {"SUBSCRIBE", "pubsub", "Listen for messages published to the given channels", "2.0.0",
     "channel [channel ...]"},
    {"UNSUBSCRIBE", "pubsub", "Stop listening for messages posted to the given channels",
     "2.0.0", "[channel [channel ...]]"},
    {"PSUBSCRIBE", "pubsub",
     "Listen for messages published to channels matching the given patterns", "2.0.0",
     "pattern [pattern ...]"},
    {"PUNSUBSCRIBE", "pubsub",
     "Stop listening for messages posted to channels matching the given patterns", "2.0.0",
     "[pattern [pattern ...]]"},
    {"SSUBSCRIBE", "pubsub", "Listen for messages published to the given shard channels",
     "7.0.0", "shardchannel [shardchannel ...]"},
    {"SUNSUBSCRIBE", "pubsub", "Stop listening for messages posted to the given shard channels",
     "7.0.0", "[shardchannel [shardchannel ...]]"},
    {"PUBLISH", "pubsub", "Post a message to a channel", "2.0.0", "channel message"},
    {"SPUBLISH", "pubsub", "Post a message to a shard channel", "7.0.0", "shardchannel message"},
    {"PUBSUB", "pubsub", "A container for Pub/Sub commands", "2.8.0", ""},
    {.name = "PUBSUB|CHANNELS", .syntax = "[pattern]"},
    {.name = "PUBSUB|NUMSUB", .syntax = "[channel [channel ...]]"},
    {.name = "PUBSUB|NUMPAT"},
    {.name = "PUBSUB|SHARDCHANNELS", .syntax = "[pattern]"},
    {.name = "PUBSUB|SHARDNUMSUB", .syntax = "[shardchannel [shardchannel ...]]"},
    {.name = "PUBSUB|HELP"},
};

// script_family.cc
constexpr CommandDoc kScriptDocs[] = {
    {"EVAL", "scripting", "Execute a Lua script server side", "2.6.0",
     "script numkeys [key [key ...]] [arg [arg ...]]"},
    {"EVALSHA", "scripting", "Execute a Lua script server side", "2.6.0",
     "sha1 numkeys [key [key ...]] [arg [arg ...]]"},
    {"EVAL_RO", "scripting", "Execute a read-only Lua script server side", "7.0.0",
     "script numkeys [key [key ...]] [arg [arg ...]]"},
    {"EVALSHA_RO", "scripting", "Execute a read-only Lua script server side", "7.0.0",
     "sha1 numkeys [key [key ...]] [arg [arg ...]]"},
    {"SCRIPT", "scripting", "A container for Lua scripts management commands", "2.6.0", ""},
    {.name = "SCRIPT|LOAD", .syntax = "script"},
    {.name = "SCRIPT|EXISTS", .syntax = "sha1 [sha1 ...]"},
    {.name = "SCRIPT|FLUSH", .syntax = "[ASYNC | SYNC]"},
    {.name = "SCRIPT|KILL"},
    {.name = "SCRIPT|HELP"},
};

// function_family.cc
constexpr CommandDoc kFunctionDocs[] = {
    {"FCALL", "scripting", "Invoke a function", "7.0.0",
     "function numkeys [key [key ...]] [arg [arg ...]]"},
    {"FCALL_RO", "scripting", "Invoke a read-only function", "7.0.0",
     "function numkeys [key [key ...]] [arg [arg ...]]"},
    {"FUNCTION", "scripting", "A container for function commands", "7.0.0", ""},
    {.name = "FUNCTION|LOAD", .syntax = "[REPLACE] function-code"},
    {.name = "FUNCTION|LIST", .syntax = "[LIBRARYNAME library-name-pattern] [WITHCODE]"},
    {.name = "FUNCTION|DELETE", .syntax = "library-name"},
    {.name = "FUNCTION|FLUSH", .syntax = "[ASYNC | SYNC]"},
    {.name = "FUNCTION|DUMP"},
    {.name = "FUNCTION|RESTORE", .syntax = "serialized-value [FLUSH | APPEND | REPLACE]"},
    {.name = "FUNCTION|STATS"},
    {.name = "FUNCTION|KILL"},
    {.name = "FUNCTION|HELP"},
};

// config_family.cc
constexpr CommandDoc kConfigDocs[] = {
    {"CONFIG", "server", "A container for server configuration commands", "2.0.0", ""},
    {.name = "CONFIG|GET", .syntax = "parameter [parameter ...]"},
    {.name = "CONFIG|SET", .syntax = "parameter value [parameter value ...]"},
    {.name = "CONFIG|RESETSTAT"},
    {.name = "CONFIG|REWRITE"},
    {.name = "CONFIG|HELP"},
};

// slowlog_family.cc
constexpr CommandDoc kSlowlogDocs[] = {
    {"SLOWLOG", "server", "A container for slow log commands", "2.2.12", ""},
    {.name = "SLOWLOG|GET", .syntax = "[count]"},
    {.name = "SLOWLOG|LEN"},
    {.name = "SLOWLOG|RESET"},
    {.name = "SLOWLOG|HELP"},
};

// latency_family.cc
constexpr CommandDoc kLatencyDocs[] = {
    {"LATENCY", "server", "A container for latency diagnostics commands", "2.8.13", ""},
    {.name = "LATENCY|DOCTOR"},
    {.name = "LATENCY|GRAPH", .syntax = "event"},
    {.name = "LATENCY|HISTORY", .syntax = "event"},
    {.name = "LATENCY|LATEST"},
    {.name = "LATENCY|RESET", .syntax = "[event [event ...]]"},
    {.name = "LATENCY|HISTOGRAM", .syntax = "[command [command ...]]"},
    {.name = "LATENCY|HELP"},
};

// string_family.cc
constexpr CommandDoc kStringDocs[] = {
    {"SET", "string", "Set the string value of a key", "1.0.0",
     "key value [NX | XX] [GET] [EX seconds | PX milliseconds | EXAT unix-time-seconds | "
     "PXAT unix-time-milliseconds | KEEPTTL]"},
    {"GET", "string", "Get the value of a key", "1.0.0", "key"},
    {"GETSET", "string", "Set the string value of a key and return its old value", "1.0.0",
     "key value"},
    {"GETDEL", "string", "Get the value of a key and delete the key", "6.2.0", "key"},
    {"GETEX", "string", "Get the value of a key and optionally set its expiration", "6.2.0",
     "key [EX seconds | PX milliseconds | EXAT unix-time-seconds | "
     "PXAT unix-time-milliseconds | PERSIST]"},
    {"SETNX", "string", "Set the value of a key, only if the key does not exist", "1.0.0",
     "key value"},
    {"SETEX", "string", "Set the value and expiration of a key", "2.0.0", "key seconds value"},
    {"PSETEX", "string", "Set the value and expiration in milliseconds of a key", "2.6.0",
     "key milliseconds value"},
    {"APPEND", "string", "Append a value to a key", "2.0.0", "key value"},
    {"STRLEN", "string", "Get the length of the value stored in a key", "2.2.0", "key"},
    {"INCR", "string", "Increment the integer value of a key by one", "1.0.0", "key"},
    {"DECR", "string", "Decrement the integer value of a key by one", "1.0.0", "key"},
    {"INCRBY", "string", "Increment the integer value of a key by the given amount", "1.0.0",
     "key increment"},
    {"DECRBY", "string", "Decrement the integer value of a key by the given number", "1.0.0",
     "key decrement"},
    {"INCRBYFLOAT", "string", "Increment the float value of a key by the given amount", "2.6.0",
     "key increment"},
    {"GETRANGE", "string", "Get a substring of the string stored at a key", "2.4.0",
     "key start end"},
    {"SUBSTR", "string", "Get a substring of the string stored at a key", "1.0.0", "key start end"},
    {"MSET", "string", "Set multiple keys to multiple values", "1.0.1",
     "key value [key value ...]"},
    {"MSETNX", "string", "Set multiple keys to multiple values, only if none of the keys exist",
     "1.0.1", "key value [key value ...]"},
    {"MGET", "string", "Get the values of all the given keys", "1.0.0", "key [key ...]"},
    {"SETRANGE", "string", "Overwrite part of a string at key starting at the specified offset",
     "2.2.0", "key offset value"},
    {"LCS", "string", "Find longest common substring", "7.0.0",
     "key1 key2 [LEN] [IDX] [MINMATCHLEN len] [WITHMATCHLEN]"},
};

// generic_family.cc
constexpr CommandDoc kGenericDocs[] = {
    {"DEL", "generic", "Delete a key", "1.0.0", "key [key ...]"},
    {"UNLINK", "generic",
     "Delete a key asynchronously in another thread. Otherwise it is just as DEL, but non "
     "blocking.",
     "4.0.0", "key [key ...]"},
    {"EXISTS", "generic", "Determine if a key exists", "1.0.0", "key [key ...]"},
    {"TOUCH", "generic",
     "Alters the last access time of a key(s). Returns the number of existing keys specified.",
     "3.2.1", "key [key ...]"},
    {"TYPE", "generic", "Determine the type stored at key", "1.0.0", "key"},
    {"TTL", "generic", "Get the time to live for a key in seconds", "1.0.0", "key"},
    {"PTTL", "generic", "Get the time to live for a key in milliseconds", "2.6.0", "key"},
    {"EXPIRETIME", "generic", "Get the expiration Unix timestamp for a key", "7.0.0", "key"},
    {"PEXPIRETIME", "generic", "Get the expiration Unix timestamp for a key in milliseconds",
     "7.0.0", "key"},
    {"PERSIST", "generic", "Remove the expiration from a key", "2.2.0", "key"},
    {"EXPIRE", "generic", "Set a key's time to live in seconds", "1.0.0",
     "key seconds [NX | XX | GT | LT]"},
    {"PEXPIRE", "generic", "Set a key's time to live in milliseconds", "2.6.0",
     "key milliseconds [NX | XX | GT | LT]"},
    {"EXPIREAT", "generic", "Set the expiration for a key as a UNIX timestamp", "1.2.0",
     "key unix-time-seconds [NX | XX | GT | LT]"},
    {"PEXPIREAT", "generic",
     "Set the expiration for a key as a UNIX timestamp specified in milliseconds", "2.6.0",
     "key unix-time-milliseconds [NX | XX | GT | LT]"},
    {"OBJECT", "generic", "A container for object introspection commands", "2.2.3", ""},
    {.name = "OBJECT|ENCODING", .syntax = "key"},
    {.name = "OBJECT|REFCOUNT", .syntax = "key"},
    {.name = "OBJECT|IDLETIME", .syntax = "key"},
    {.name = "OBJECT|FREQ", .syntax = "key"},
    {.name = "OBJECT|HELP"},
    {"RENAME", "generic", "Rename a key", "1.0.0", "key newkey"},
    {"RENAMENX", "generic", "Rename a key, only if the new key does not exist", "1.0.0",
     "key newkey"},
    {"COPY", "generic", "Copy a key", "6.2.0", "source destination [DB destination-db] [REPLACE]"},
    {"MOVE", "generic", "Move a key to another database", "1.0.0", "key db"},
    {"DUMP", "generic",
     "Return a serialized version of the value stored at the specified key.", "2.6.0", "key"},
    {"RESTORE", "generic", "Create a key using the provided serialized value, previously obtained using DUMP.",
     "2.6.0", "key ttl serialized-value [REPLACE] [ABSTTL] [IDLETIME seconds] [FREQ frequency]"},
    {"SWAPDB", "generic", "Swaps two Redis databases", "4.0.0", "index1 index2"},
    {"KEYS", "generic", "Find all keys matching the given pattern", "1.0.0", "pattern"},
    {"SCAN", "generic", "Incrementally iterate the keys space", "2.8.0",
     "cursor [MATCH pattern] [COUNT count] [TYPE type]"},
    {"RANDOMKEY", "generic", "Return a random key from the keyspace", "1.0.0", ""},
};

// sort_family.cc
constexpr CommandDoc kSortDocs[] = {
    {"SORT", "generic", "Sort the elements in a list, set or sorted set", "1.0.0",
     "key [BY pattern] [LIMIT offset count] [GET pattern [GET pattern ...]] [ASC | DESC] "
     "[ALPHA] [STORE destination]"},
    {"SORT_RO", "generic", "Sort the elements in a list, set or sorted set. Read-only variant of SORT.",
     "7.0.0",
     "key [BY pattern] [LIMIT offset count] [GET pattern [GET pattern ...]] [ASC | DESC] "
     "[ALPHA]"},
};

// hash_family.cc
constexpr CommandDoc kHashDocs[] = {
    {"HSET", "hash", "Set the string value of a hash field", "2.0.0",
     "key field value [field value ...]"},
    {"HSETNX", "hash", "Set the value of a hash field, only if the field does not exist",
     "2.0.0", "key field value"},
    {"HMSET", "hash", "Set multiple hash fields to multiple values", "2.0.0",
     "key field value [field value ...]"},
    {"HGET", "hash", "Get the value of a hash field", "2.0.0", "key field"},
    {"HMGET", "hash", "Get the values of all the given hash fields", "2.0.0",
     "key field [field ...]"},
    {"HDEL", "hash", "Delete one or more hash fields", "2.0.0", "key field [field ...]"},
    {"HLEN", "hash", "Get the number of fields in a hash", "2.0.0", "key"},
    {"HEXISTS", "hash", "Determine if a hash field exists", "2.0.0", "key field"},
    {"HSTRLEN", "hash", "Get the length of the value of a hash field", "3.2.0", "key field"},
    {"HINCRBY", "hash", "Increment the integer value of a hash field by the given number",
     "2.0.0", "key field increment"},
    {"HINCRBYFLOAT", "hash", "Increment the float value of a hash field by the given amount",
     "2.6.0", "key field increment"},
    {"HKEYS", "hash", "Get all the fields in a hash", "2.0.0", "key"},
    {"HVALS", "hash", "Get all the values in a hash", "2.0.0", "key"},
    {"HGETALL", "hash", "Get all the fields and values in a hash", "2.0.0", "key"},
    {"HRANDFIELD", "hash", "Get one or multiple random fields from a hash", "6.2.0",
     "key [count [WITHVALUES]]"},
    {"HSCAN", "hash", "Incrementally iterate hash fields and associated values", "2.8.0",
     "key cursor [MATCH pattern] [COUNT count]"},
};

// list_family.cc
constexpr CommandDoc kListDocs[] = {
    {"LPUSH", "list", "Prepend one or multiple elements to a list", "1.0.0",
     "key element [element ...]"},
    {"RPUSH", "list", "Append one or multiple elements to a list", "1.0.0",
     "key element [element ...]"},
    {"LPUSHX", "list", "Prepend an element to a list, only if the list exists", "2.2.0",
     "key element [element ...]"},
    {"RPUSHX", "list", "Append an element to a list, only if the list exists", "2.2.0",
     "key element [element ...]"},
    {"LPOP", "list", "Remove and get the first elements in a list", "1.0.0", "key [count]"},
    {"RPOP", "list", "Remove and get the last elements in a list", "1.0.0", "key [count]"},
    {"LLEN", "list", "Get the length of a list", "1.0.0", "key"},
    {"LRANGE", "list", "Get a range of elements from a list", "1.0.0", "key start stop"},
    {"LINDEX", "list", "Get an element from a list by its index", "1.0.0", "key index"},
    {"LSET", "list", "Set the value of an element in a list by its index", "1.0.0",
     "key index element"},
    {"LINSERT", "list", "Insert an element before or after another element in a list", "2.2.0",
     "key <BEFORE | AFTER> pivot element"},
    {"LREM", "list", "Remove elements from a list", "1.0.0", "key count element"},
    {"LTRIM", "list", "Trim a list to the specified range", "1.0.0", "key start stop"},
    {"LPOS", "list", "Return the index of matching elements on a list", "6.0.6",
     "key element [RANK rank] [COUNT num-matches] [MAXLEN len]"},
    {"LMOVE", "list", "Pop an element from a list, push it to another list and return it",
     "6.2.0", "source destination <LEFT | RIGHT> <LEFT | RIGHT>"},
    {"RPOPLPUSH", "list",
     "Remove the last element in a list, prepend it to another list and return it", "1.2.0",
     "source destination"},
    {"LMPOP", "list", "Pop elements from a list", "7.0.0",
     "numkeys key [key ...] <LEFT | RIGHT> [COUNT count]"},
    {"BLPOP", "list",
     "Remove and get the first element in a list, or block until one is available", "2.0.0",
     "key [key ...] timeout"},
    {"BRPOP", "list",
     "Remove and get the last element in a list, or block until one is available", "2.0.0",
     "key [key ...] timeout"},
    {"BLMPOP", "list", "Pop elements from a list, or block until one is available", "7.0.0",
     "timeout numkeys key [key ...] <LEFT | RIGHT> [COUNT count]"},
    {"BLMOVE", "list",
     "Pop an element from a list, push it to another list and return it; or block until one "
     "is available",
     "6.2.0", "source destination <LEFT | RIGHT> <LEFT | RIGHT> timeout"},
    {"BRPOPLPUSH", "list",
     "Pop an element from a list, push it to another list and return it; or block until one "
     "is available",
     "2.2.0", "source destination timeout"},
};

// hll_family.cc
constexpr CommandDoc kHllDocs[] = {
    {"PFADD", "hyperloglog", "Adds the specified elements to the specified HyperLogLog.",
     "2.8.9", "key [element [element ...]]"},
    {"PFCOUNT", "hyperloglog",
     "Return the approximated cardinality of the set(s) observed by the HyperLogLog at key(s).",
     "2.8.9", "key [key ...]"},
    {"PFMERGE", "hyperloglog", "Merge N different HyperLogLogs into a single one.", "2.8.9",
     "destkey [sourcekey [sourcekey ...]]"},
    {"PFDEBUG", "hyperloglog", "Internal commands for debugging HyperLogLog values", "2.8.9",
     "subcommand key"},
    {"PFSELFTEST", "hyperloglog", "An internal command for testing HyperLogLog values", "2.8.9",
     ""},
};

// set_family.cc
constexpr CommandDoc kSetDocs[] = {
    {"SADD", "set", "Add one or more members to a set", "1.0.0", "key member [member ...]"},
    {"SREM", "set", "Remove one or more members from a set", "1.0.0", "key member [member ...]"},
    {"SMEMBERS", "set", "Get all the members in a set", "1.0.0", "key"},
    {"SISMEMBER", "set", "Determine if a given value is a member of a set", "1.0.0",
     "key member"},
    {"SMISMEMBER", "set", "Returns the membership associated with the given elements for a set",
     "6.2.0", "key member [member ...]"},
    {"SCARD", "set", "Get the number of members in a set", "1.0.0", "key"},
    {"SPOP", "set", "Remove and return one or multiple random members from a set", "1.0.0",
     "key [count]"},
    {"SRANDMEMBER", "set", "Get one or multiple random members from a set", "1.0.0",
     "key [count]"},
    {"SMOVE", "set", "Move a member from one set to another", "1.0.0",
     "source destination member"},
    {"SINTER", "set", "Intersect multiple sets", "1.0.0", "key [key ...]"},
    {"SUNION", "set", "Add multiple sets", "1.0.0", "key [key ...]"},
    {"SDIFF", "set", "Subtract multiple sets", "1.0.0", "key [key ...]"},
    {"SINTERSTORE", "set", "Intersect multiple sets and store the resulting set in a key",
     "1.0.0", "destination key [key ...]"},
    {"SUNIONSTORE", "set", "Add multiple sets and store the resulting set in a key", "1.0.0",
     "destination key [key ...]"},
    {"SDIFFSTORE", "set", "Subtract multiple sets and store the resulting set in a key", "1.0.0",
     "destination key [key ...]"},
    {"SINTERCARD", "set", "Intersect multiple sets and return the cardinality of the result",
     "7.0.0", "numkeys key [key ...] [LIMIT limit]"},
    {"SSCAN", "set", "Incrementally iterate Set elements", "2.8.0",
     "key cursor [MATCH pattern] [COUNT count]"},
};

// debug_family.cc
constexpr CommandDoc kDebugDocs[] = {
    {"DEBUG", "server", "A container for debugging commands", "1.0.0", ""},
    {"MEMORY", "server", "A container for memory diagnostics commands", "4.0.0", ""},
    {.name = "MEMORY|USAGE", .syntax = "key [SAMPLES count]"},
    {.name = "MEMORY|STATS"},
    {.name = "MEMORY|DOCTOR"},
    {.name = "MEMORY|PURGE"},
    {.name = "MEMORY|MALLOC-STATS"},
    {.name = "MEMORY|HELP"},
};

// multi_exec.cc
constexpr CommandDoc kTransactionDocs[] = {
    {"MULTI", "transactions", "Mark the start of a transaction block", "1.2.0", ""},
    {"EXEC", "transactions", "Execute all commands issued after MULTI", "1.2.0", ""},
    {"DISCARD", "transactions", "Discard all commands issued after MULTI", "1.2.0", ""},
    {"WATCH", "transactions", "Watch the given keys to determine execution of the MULTI/EXEC block",
     "2.2.0", "key [key ...]"},
    {"UNWATCH", "transactions", "Forget about all watched keys", "2.2.0", ""},
};

// zset_family.cc
constexpr CommandDoc kZSetDocs[] = {
    {"ZADD", "sorted-set",
     "Add one or more members to a sorted set, or update its score if it already exists",
     "1.2.0", "key [NX | XX] [GT | LT] [CH] [INCR] score member [score member ...]"},
    {"ZINCRBY", "sorted-set", "Increment the score of a member in a sorted set", "1.2.0",
     "key increment member"},
    {"ZREM", "sorted-set", "Remove one or more members from a sorted set", "1.2.0",
     "key member [member ...]"},
    {"ZCARD", "sorted-set", "Get the number of members in a sorted set", "1.2.0", "key"},
    {"ZSCORE", "sorted-set", "Get the score associated with the given member in a sorted set",
     "1.2.0", "key member"},
    {"ZMSCORE", "sorted-set",
     "Get the score associated with the given members in a sorted set", "6.2.0",
     "key member [member ...]"},
    {"ZRANK", "sorted-set", "Determine the index of a member in a sorted set", "2.0.0",
     "key member"},
    {"ZREVRANK", "sorted-set",
     "Determine the index of a member in a sorted set, with scores ordered from high to low",
     "2.0.0", "key member"},
    {"ZCOUNT", "sorted-set", "Count the members in a sorted set with scores within the given values",
     "2.0.0", "key min max"},
    {"ZLEXCOUNT", "sorted-set",
     "Count the number of members in a sorted set between a given lexicographical range",
     "2.8.9", "key min max"},
    {"ZRANGE", "sorted-set", "Return a range of members in a sorted set", "1.2.0",
     "key start stop [BYSCORE | BYLEX] [REV] [LIMIT offset count] [WITHSCORES]"},
    {"ZREVRANGE", "sorted-set",
     "Return a range of members in a sorted set, by index, with scores ordered from high to low",
     "1.2.0", "key start stop [WITHSCORES]"},
    {"ZRANGEBYSCORE", "sorted-set", "Return a range of members in a sorted set, by score",
     "1.0.5", "key min max [WITHSCORES] [LIMIT offset count]"},
    {"ZREVRANGEBYSCORE", "sorted-set",
     "Return a range of members in a sorted set, by score, with scores ordered from high to low",
     "2.2.0", "key max min [WITHSCORES] [LIMIT offset count]"},
    {"ZRANGEBYLEX", "sorted-set",
     "Return a range of members in a sorted set, by lexicographical range", "2.8.9",
     "key min max [LIMIT offset count]"},
    {"ZREVRANGEBYLEX", "sorted-set",
     "Return a range of members in a sorted set, by lexicographical range, ordered from higher "
     "to lower strings",
     "2.8.9", "key max min [LIMIT offset count]"},
    {"ZRANGESTORE", "sorted-set", "Store a range of members from sorted set into another key",
     "6.2.0", "dst src min max [BYSCORE | BYLEX] [REV] [LIMIT offset count]"},
    {"ZREMRANGEBYRANK", "sorted-set",
     "Remove all members in a sorted set within the given indexes", "2.0.0", "key start stop"},
    {"ZREMRANGEBYSCORE", "sorted-set",
     "Remove all members in a sorted set within the given scores", "1.2.0", "key min max"},
    {"ZREMRANGEBYLEX", "sorted-set",
     "Remove all members in a sorted set between the given lexicographical range", "2.8.9",
     "key min max"},
    {"ZPOPMIN", "sorted-set",
     "Remove and return members with the lowest scores in a sorted set", "5.0.0",
     "key [count]"},
    {"ZPOPMAX", "sorted-set",
     "Remove and return members with the highest scores in a sorted set", "5.0.0",
     "key [count]"},
    {"ZMPOP", "sorted-set",
     "Remove and return members with scores in a sorted set", "7.0.0",
     "numkeys key [key ...] <MIN | MAX> [COUNT count]"},
    {"BZPOPMIN", "sorted-set",
     "Remove and return the member with the lowest score from one or more sorted sets, or "
     "block until one is available",
     "5.0.0", "key [key ...] timeout"},
    {"BZPOPMAX", "sorted-set",
     "Remove and return the member with the highest score from one or more sorted sets, or "
     "block until one is available",
     "5.0.0", "key [key ...] timeout"},
    {"BZMPOP", "sorted-set",
     "Remove and return members with scores in a sorted set or block until one is available",
     "7.0.0", "timeout numkeys key [key ...] <MIN | MAX> [COUNT count]"},
    {"ZRANDMEMBER", "sorted-set", "Get one or multiple random elements from a sorted set",
     "6.2.0", "key [count [WITHSCORES]]"},
    {"ZSCAN", "sorted-set", "Incrementally iterate sorted sets elements and associated scores",
     "2.8.0", "key cursor [MATCH pattern] [COUNT count]"},
    {"ZUNION", "sorted-set", "Add multiple sorted sets", "6.2.0",
     "numkeys key [key ...] [WEIGHTS weight [weight ...]] [AGGREGATE SUM | MIN | MAX] "
     "[WITHSCORES]"},
    {"ZINTER", "sorted-set", "Intersect multiple sorted sets", "6.2.0",
     "numkeys key [key ...] [WEIGHTS weight [weight ...]] [AGGREGATE SUM | MIN | MAX] "
     "[WITHSCORES]"},
    {"ZDIFF", "sorted-set", "Subtract multiple sorted sets", "6.2.0",
     "numkeys key [key ...] [WITHSCORES]"},
    {"ZINTERCARD", "sorted-set", "Intersect multiple sorted sets and return the cardinality of the result",
     "7.0.0", "numkeys key [key ...] [LIMIT limit]"},
    {"ZUNIONSTORE", "sorted-set", "Add multiple sorted sets and store the resulting sorted set in a new key",
     "2.0.0",
     "destination numkeys key [key ...] [WEIGHTS weight [weight ...]] [AGGREGATE SUM | MIN | MAX]"},
    {"ZINTERSTORE", "sorted-set",
     "Intersect multiple sorted sets and store the resulting sorted set in a new key", "2.0.0",
     "destination numkeys key [key ...] [WEIGHTS weight [weight ...]] [AGGREGATE SUM | MIN | MAX]"},
    {"ZDIFFSTORE", "sorted-set", "Subtract multiple sorted sets and store the resulting sorted set in a new key",
     "6.2.0", "destination numkeys key [key ...]"},
};

// geo_family.cc
constexpr CommandDoc kGeoDocs[] = {
    {"GEOADD", "geo",
     "Add one or more geospatial items in the geospatial index represented using a sorted set",
     "3.2.0", "key [NX | XX] [CH] longitude latitude member [longitude latitude member ...]"},
    {"GEOPOS", "geo", "Returns longitude and latitude of members of a geospatial index", "3.2.0",
     "key member [member ...]"},
    {"GEOHASH", "geo", "Returns members of a geospatial index as standard geohash strings",
     "3.2.0", "key member [member ...]"},
    {"GEODIST", "geo", "Returns the distance between two members of a geospatial index", "3.2.0",
     "key member1 member2 [M | KM | FT | MI]"},
    {"GEORADIUS", "geo",
     "Query a sorted set representing a geospatial index to fetch members matching a given "
     "maximum distance from a point",
     "3.2.0",
     "key longitude latitude radius <M | KM | FT | MI> [WITHCOORD] [WITHDIST] [WITHHASH] "
     "[COUNT count [ANY]] [ASC | DESC] [STORE key] [STOREDIST key]"},
    {"GEORADIUS_RO", "geo", "A read-only variant for GEORADIUS", "3.2.10",
     "key longitude latitude radius <M | KM | FT | MI> [WITHCOORD] [WITHDIST] [WITHHASH] "
     "[COUNT count [ANY]] [ASC | DESC]"},
    {"GEORADIUSBYMEMBER", "geo",
     "Query a sorted set representing a geospatial index to fetch members matching a given "
     "maximum distance from a member",
     "3.2.0",
     "key member radius <M | KM | FT | MI> [WITHCOORD] [WITHDIST] [WITHHASH] "
     "[COUNT count [ANY]] [ASC | DESC] [STORE key] [STOREDIST key]"},
    {"GEORADIUSBYMEMBER_RO", "geo", "A read-only variant for GEORADIUSBYMEMBER", "3.2.10",
     "key member radius <M | KM | FT | MI> [WITHCOORD] [WITHDIST] [WITHHASH] "
     "[COUNT count [ANY]] [ASC | DESC]"},
    {"GEOSEARCH", "geo",
     "Query a sorted set representing a geospatial index to fetch members inside an area of a "
     "box or a circle.",
     "6.2.0",
     "key <FROMMEMBER member | FROMLONLAT longitude latitude> <BYRADIUS radius <M | KM | FT | "
     "MI> | BYBOX width height <M | KM | FT | MI>> [ASC | DESC] [COUNT count [ANY]] "
     "[WITHCOORD] [WITHDIST] [WITHHASH]"},
    {"GEOSEARCHSTORE", "geo",
     "Query a sorted set representing a geospatial index to fetch members inside an area of a "
     "box or a circle, and store the result in another key.",
     "6.2.0",
     "destination source <FROMMEMBER member | FROMLONLAT longitude latitude> <BYRADIUS radius "
     "<M | KM | FT | MI> | BYBOX width height <M | KM | FT | MI>> [ASC | DESC] "
     "[COUNT count [ANY]] [STOREDIST]"},
};

}  // namespace

void AddCommandDocs(facade::CommandRegistry* registry) {
  registry->AddDocs(kConnectionDocs);
  registry->AddDocs(kServerDocs);
  registry->AddDocs(kReplicationDocs);
  registry->AddDocs(kStandaloneDocs);
  registry->AddDocs(kAclDocs);
  registry->AddDocs(kConfigDocs);
  registry->AddDocs(kScriptDocs);
  registry->AddDocs(kFunctionDocs);
  registry->AddDocs(kSlowlogDocs);
  registry->AddDocs(kLatencyDocs);
  registry->AddDocs(kStringDocs);
  registry->AddDocs(kGenericDocs);
  registry->AddDocs(kHashDocs);
  registry->AddDocs(kSortDocs);
  registry->AddDocs(kListDocs);
  registry->AddDocs(kSetDocs);
  registry->AddDocs(kDebugDocs);
  registry->AddDocs(kTransactionDocs);
  registry->AddDocs(kZSetDocs);
  registry->AddDocs(kGeoDocs);
  registry->AddDocs(kPubSubDocs);
  registry->AddDocs(kStreamDocs);
  registry->AddDocs(kHllDocs);
  registry->AddDocs(kBitmapDocs);
}

}  // namespace damselfly
