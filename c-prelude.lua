
local key = KEYS[1]
local limit = tonumber(ARGV[2])
local windowMs = tonumber(ARGV[3])
local bucketMs = tonumber(ARGV[4])


return {1,0,0,1}
