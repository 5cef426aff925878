// SPDX-License-Identifier: Apache-2.0
#include "sjail/sys/job/job_user.hpp"

#include "sjail/core/job/job_layout.hpp"
#include "sjail/sys/small_file.hpp"

#include <cerrno>
#include <charconv>
#include <dirent.h>
#include <sys/stat.h>

namespace sjail {
namespace {

std::string user_file(const std::string &state_dir, std::uint32_t job) {
    return job_paths(state_dir, job).user;
}

std::optional<uid_t> parse_uid(const std::string &text) {
    uid_t uid = 0;
    const char *end = text.data() + text.size();
    if (!text.empty() && text.back() == '\n') {
        --end;
    }
    const auto [ptr, ec] = std::from_chars(text.data(), end, uid);
    return ec == std::errc() && ptr == end && ptr != text.data() ? std::optional(uid)
                                                                 : std::nullopt;
}

} // namespace

void record_job_user(const std::string &state_dir, std::uint32_t job, uid_t uid) {
    const std::string path = user_file(state_dir, job);
    struct stat st {};
    if (::lstat(path.c_str(), &st) == 0 || errno != ENOENT) {
        return;
    }
    (void)write_file_atomically(path, std::to_string(uid) + "\n");
}

std::optional<std::set<uid_t>> users_of_jobs(const std::string &state_dir) {
    std::set<uid_t> users;
    DIR *dir = ::opendir(jobs_dir(state_dir).c_str());
    if (dir == nullptr) {
        return users;
    }
    bool all_known = true;
    while (const dirent *e = ::readdir(dir)) {
        const auto job = job_of_entry(e->d_name);
        if (!job) {
            continue;
        }
        const auto uid = parse_uid(read_small_file(user_file(state_dir, *job), 64));
        if (!uid) {
            all_known = false;
            break;
        }
        users.insert(*uid);
    }
    ::closedir(dir);
    return all_known ? std::optional(users) : std::nullopt;
}

} // namespace sjail
