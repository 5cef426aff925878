// SPDX-License-Identifier: Apache-2.0
// pam_slurm_jail.so: PAM glue. SSH sessions enter the same jail as jobs.
//
//   account  checks everything the session will need (the chroot.so line of
//            plugstack.conf, the jail, the node's or the job's namespaces,
//            the user in the jail's /etc/passwd) without entering anything:
//            sshd sends a refusal here to the client as a banner, so users
//            read why.
//   session  does the same checks again (a PAM stack may lack the account
//            line) and moves sshd's monitor into the jail (a job's view and
//            PID namespace when pam_slurm_adopt adopted the session into a
//            job; on a compute node with no_job=private, a PID namespace
//            of the session's own); sshd forks the session's processes
//            after this.
// Every refusal is one line to syslog and to the user. No exception leaves
// a PAM entry point.
extern "C" {
#include <security/pam_ext.h>
#include <security/pam_modules.h>
}

#include "job_owner.hpp"
#include "session_entry.hpp"
#include "session_plan.hpp"

#include <pwd.h>
#include <string>
#include <syslog.h>
#include <unistd.h>
#include <vector>

namespace {

using sjail::Status;

enum class Phase { Account, Session };

std::vector<std::string> args_of(int argc, const char **argv) {
    std::vector<std::string> args;
    args.reserve(static_cast<std::size_t>(argc > 0 ? argc : 0));
    for (int i = 0; i < argc; ++i) {
        args.emplace_back(argv[i]);
    }
    return args;
}

int refuse(pam_handle_t *pamh, Phase phase, const std::string &user, const std::string &why) {
    const std::string line = "pam_slurm_jail: no session for " +
                             (user.empty() ? std::string("this user") : user) +
                             ", the jail cannot be entered: " + why;
    pam_syslog(pamh, LOG_ERR, "%s", line.c_str());
    pam_error(pamh, "%s", line.c_str());
    return phase == Phase::Account ? PAM_PERM_DENIED : PAM_SESSION_ERR;
}

// The user's name (as PAM has it) and uid on this node.
Status user_of(pam_handle_t *pamh, sjail::SessionUser &out) {
    const char *name = nullptr;
    if (pam_get_user(pamh, &name, nullptr) != PAM_SUCCESS || name == nullptr || *name == '\0') {
        return Status::failure("PAM has no user name");
    }
    out.name = name;
    struct passwd pw {};
    struct passwd *found = nullptr;
    std::vector<char> buf(16384);
    if (::getpwnam_r(name, &pw, buf.data(), buf.size(), &found) != 0 || found == nullptr) {
        return Status::failure("user " + out.name + " is unknown on this node");
    }
    out.uid = pw.pw_uid;
    out.pam_env_job = pam_getenv(pamh, "SLURM_JOB_ID");
    return {};
}

int run(pam_handle_t *pamh, Phase phase, int argc, const char **argv) {
    sjail::SessionUser user;
    if (Status s = user_of(pamh, user); !s.ok()) {
        return refuse(pamh, phase, user.name, s.message());
    }
    if (::geteuid() != 0) {
        return refuse(pamh, phase, user.name, "the module must run as root (in sshd)");
    }
    const auto args = sjail::parse_module_args(args_of(argc, argv));
    if (!args.status.ok()) {
        return refuse(pamh, phase, user.name,
                      "pam_slurm_jail.so arguments: " + args.status.message());
    }
    sjail::SessionPlan plan;
    if (Status s = sjail::plan_session(args, user, sjail::check_job_owner, plan); !s.ok()) {
        return refuse(pamh, phase, user.name, s.message());
    }
    if (phase == Phase::Account) {
        return PAM_SUCCESS;
    }
    std::string notice;
    if (Status s = sjail::enter_session(plan, notice); !s.ok()) {
        return refuse(pamh, phase, user.name, s.message());
    }
    if (!notice.empty()) {
        pam_syslog(pamh, LOG_NOTICE, "%s", notice.c_str());
        pam_info(pamh, "%s", notice.c_str());
    }
    const std::string where = plan.decision.action == sjail::SessionAction::Job
                                  ? "job " + std::to_string(plan.decision.job)
                              : plan.decision.action == sjail::SessionAction::Private
                                  ? std::string("the node's jail with a PID namespace of its own")
                                  : std::string("the node's jail");
    pam_syslog(pamh, LOG_INFO, "session of %s entered %s (%s)", user.name.c_str(), where.c_str(),
               plan.config.jail.c_str());
    return PAM_SUCCESS;
}

int guarded(pam_handle_t *pamh, Phase phase, int argc, const char **argv) noexcept {
    try {
        return run(pamh, phase, argc, argv);
    } catch (...) {
        pam_syslog(pamh, LOG_CRIT, "pam_slurm_jail: out of memory; no session");
        return phase == Phase::Account ? PAM_PERM_DENIED : PAM_SESSION_ERR;
    }
}

} // namespace

extern "C" {

PAM_EXTERN int pam_sm_acct_mgmt(pam_handle_t *pamh, int /*flags*/, int argc, const char **argv) {
    return guarded(pamh, Phase::Account, argc, argv);
}

PAM_EXTERN int pam_sm_open_session(pam_handle_t *pamh, int /*flags*/, int argc, const char **argv) {
    return guarded(pamh, Phase::Session, argc, argv);
}

PAM_EXTERN int pam_sm_close_session(pam_handle_t * /*pamh*/, int /*flags*/, int /*argc*/,
                                    const char ** /*argv*/) {
    return PAM_SUCCESS;
}

} // extern "C"
