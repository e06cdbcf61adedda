# The real Sidekiq (Debian's ruby-sidekiq 6.4) against the server, for
# tests/test_script_apps.py. Sidekiq's scheduler moves due jobs out of the "schedule" sorted
# set with its Lua zpopbyscore script (SCRIPT LOAD + EVALSHA, EVAL again after NOSCRIPT);
# its workers fetch with BRPOP and keep their heartbeat in MULTI pipelines.
#
# Loaded by the worker:  sidekiq -r ./sidekiq_jobs.rb   (REDIS_URL names the server)
# Run to enqueue:        ruby sidekiq_jobs.rb <immediate> <scheduled> <delay seconds>
#   enqueues <immediate> RecordJobs, <scheduled> more due in <delay seconds>, and one
#   BrokenJob, then prints "enqueued".
require "sidekiq"

# redis-rb 4.8 warns on every SADD (Sidekiq's push) that its return type will change.
Redis.sadd_returns_boolean = false

# Poll the schedule every 0.5 s on average instead of Sidekiq's 5 s or more (scaled by the
# number of processes), so that the test stays short.
Sidekiq.options[:poll_interval_average] = 0.5

# Counts its runs per name in the hash test:done.
class RecordJob
  include Sidekiq::Worker

  def perform(name)
    Sidekiq.redis { |c| c.hincrby("test:done", name, 1) }
  end
end

# Always fails; with retry: 0 Sidekiq moves it to the dead set at once.
class BrokenJob
  include Sidekiq::Worker
  sidekiq_options retry: 0

  def perform
    raise "broken on purpose"
  end
end

if $PROGRAM_NAME == __FILE__
  immediate, scheduled = Integer(ARGV[0]), Integer(ARGV[1])
  delay = Float(ARGV[2])
  immediate.times { |i| RecordJob.perform_async("now-#{i}") }
  scheduled.times { |i| RecordJob.perform_in(delay, "later-#{i}") }
  BrokenJob.perform_async
  puts "enqueued"
end
