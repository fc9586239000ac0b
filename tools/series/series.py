"""Apply the patch series to a kernel tree and export it back to patches/.

Each series (one topic for one tree) lives in patches/<tree>/<topic>/ as
git format-patch output: fixes under patches/net, features under
patches/net-next. `apply` turns them into branches of a kernel worktree,
<prefix><tree>/<topic>, net topics first, then net-next topics, each in name
order. A series starts from the kernel base unless series.conf names the
series it builds on (SERIES_BASE_<TREE>_<TOPIC>="<tree>/<topic>"), and
<prefix>all merges them all: the patched kernel. Developers edit commits on
the series branches; `export` writes them back. Applying then exporting
reproduces the committed files byte for byte. `apply` checks everything
before writing anything and refuses to lose work (apply()); a failed
`export` or `send-prep` leaves its output as it was (staged()).

Posting follows netdev's order: netdev CI applies a series to the tip of
its tree, so a series building on another cannot be posted until that one
is merged into its tree. `post-order` prints the order and what can be
posted now; `send-prep --merged <tree>/<topic>` writes a dependent series
as it is posted once its prerequisite is merged: rebased onto the base with
the prerequisite merged, without prerequisite-patch-id lines.

This module is the command line; each command lives in a module of its own
over the shared model (model.py): applying.py, exporting.py, order.py and
sendprep.py. Their names are importable from here too.
"""

import argparse
import sys
from pathlib import Path

from common import logs
# The commands' modules; their names are this module's too (series.apply(), ...).
from tools.series.applying import (HUNK_RE, Move, am_commit, apply, build_series, checked_out,
                                   contents, failed_hunks, in_the_way, lost_commits, merge_all,
                                   patch_ids, stripped)
from tools.series.exporting import (MBOX, PATCH_FILES, canonical_chain, canonical_tip, export,
                                    staged, uncommitted, unexported, write_series)
from tools.series.model import (COVER_RE, DEFAULT_PREFIX, IN_PROGRESS, PATCHES, SHORTLOG_RE,
                                TREES, Cover, Series, SeriesError, base_commit, base_key, git,
                                git_dir, in_progress, is_rfc, leaves, listed, load_conf,
                                load_series,
                                parse_cover, recorded, recover, reports_errors, role_env,
                                submitter_identity, substitute_identity, tip_of, version_key,
                                work_tree, workspace_series)
from tools.series.order import Posting, order_lines, post_order
from tools.series.sendprep import (applied_tree, check_posting, mbox_path, merged_base,
                                   recipients, send_prep)

__all__ = [
    "is_rfc",
    "HUNK_RE", "Move", "am_commit", "apply", "build_series", "checked_out", "contents",
    "failed_hunks", "in_the_way", "lost_commits", "merge_all", "patch_ids", "stripped",
    "MBOX", "PATCH_FILES", "canonical_chain", "canonical_tip", "export", "staged",
    "uncommitted", "unexported", "write_series",
    "COVER_RE", "DEFAULT_PREFIX", "IN_PROGRESS", "PATCHES", "SHORTLOG_RE", "TREES", "Cover",
    "Series", "SeriesError", "base_commit", "base_key", "git", "git_dir", "in_progress",
    "leaves", "listed", "load_conf", "load_series", "parse_cover", "recorded", "recover",
    "reports_errors", "role_env", "submitter_identity", "substitute_identity", "tip_of",
    "version_key", "work_tree", "workspace_series",
    "Posting", "order_lines", "post_order",
    "applied_tree", "check_posting", "mbox_path", "merged_base", "recipients", "send_prep",
    "kept_topics", "main",
]


def kept_topics(outdir: Path, tree: str, prefix: str) -> None:
    kept = unexported(outdir, {(t, topic) for t, topic, _ in workspace_series(tree, prefix)})
    if kept:
        print(f"kept {', '.join(kept)}: no {prefix}<tree>/<topic> branch in {tree}, left as "
              "they are (remove a directory yourself to drop its series)")


@reports_errors
@logs.printed
def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    ap.add_argument("--prefix", default=DEFAULT_PREFIX, help="workspace branch prefix")
    a = sub.add_parser("apply", help="apply patches/ to TREE as branches <prefix><tree>/<topic>")
    a.add_argument("tree")
    a.add_argument("base", help="base commit or tag")
    a.add_argument("--patches", type=Path, default=PATCHES, help="default %(default)s")
    a.add_argument("--force", action="store_true",
                   help="move the branches even if they hold commits neither patches/ nor the "
                   "last apply made, or the tree is not clean (uncommitted changes are kept, "
                   "HEAD's commit too)")
    tree_help = "a kernel work tree holding the series/<tree>/<topic> branches (apply made them)"
    base_help = ("the commit or tag the series apply to, as given to apply (the files' "
                 "base-commit:)")
    e = sub.add_parser("export", help="write the workspace branches back to patches/",
                       description="Write every <prefix><tree>/<topic> branch of TREE back as "
                       "OUT/<tree>/<topic>/*.patch (git format-patch against BASE). Only those "
                       "topics are replaced; a file with uncommitted changes there is refused.")
    e.add_argument("tree", help=tree_help)
    e.add_argument("base", help=base_help)
    e.add_argument("--out", default=str(PATCHES),
                   help="where the series go (default: patches/ of this repository)")
    o = sub.add_parser("post-order", help="the order to post the series in, and which can be "
                       "posted now")
    o.add_argument("--patches", type=Path, default=PATCHES, help="default %(default)s")
    s = sub.add_parser("send-prep", help="write the series that can be posted now, as posted, "
                       "with the submitter's identity",
                       description="Write each series that can be posted now (post-order) as "
                       "it is posted: your git identity, To/Cc from get_maintainer.pl, no "
                       "prerequisite ids; checked to apply to its base.")
    s.add_argument("tree", help=tree_help)
    s.add_argument("base", help=base_help)
    s.add_argument("--out", required=True,
                   help="the output directory: one directory per series, <tree>/<topic>/, and "
                   "its mbox, <tree>/<topic>/v<N>.mbox (what tools.series.check and git am "
                   "read)")
    for parser in (o, s):
        parser.add_argument("--merged", action="append", default=[], metavar="TREE/TOPIC",
                            help="this series is merged into the tree of the series building "
                            "on it (repeatable)")
    args = ap.parse_args(argv)
    if args.cmd == "apply":
        applied = apply(args.tree, args.base, patches=args.patches, prefix=args.prefix,
                        force=args.force)
        names = sorted({ser.name for ser, _, _ in applied}, key=lambda n: n)
        print(f"applied {len(applied)} patches to {args.tree}; branches: "
              + ", ".join(args.prefix + n for n in names))
    elif args.cmd == "export":
        files = export(args.tree, args.base, Path(args.out), prefix=args.prefix)
        print(f"exported {len(files)} files to {args.out}")
        kept_topics(Path(args.out), args.tree, args.prefix)
    elif args.cmd == "post-order":
        conf = load_conf(args.patches / "series.conf")
        postings = post_order(load_series(conf, args.patches), args.merged)
        print("posting order (netdev CI applies a series to the tip of its tree):")
        print("\n".join("  " + line for line in order_lines(postings)))
    else:
        done = send_prep(args.tree, args.base, Path(args.out), args.merged,
                         identity=submitter_identity(args.tree), prefix=args.prefix)
        for line in order_lines([p for p, _ in done]):
            print(line)
        for p, files in done:
            if files:
                d = Path(args.out) / p.series.tree / p.series.topic
                print(f"wrote {len(files)} files of {p.series.name} to {d}")
                for box in sorted(d.glob("v*.mbox")):
                    print(f"wrote {box} (the same mails in one mbox)")
                if p.to or p.cc:
                    print(f"  To: {', '.join(p.to)}\n  Cc: {', '.join(p.cc)}")
                else:
                    print(f"  no To/Cc: no scripts/get_maintainer.pl in {args.tree}")
        kept_topics(Path(args.out), args.tree, args.prefix)
    return 0


if __name__ == "__main__":
    sys.exit(main())
