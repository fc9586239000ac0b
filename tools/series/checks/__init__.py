"""Per-patch and per-series checks, under the names netdev CI (NIPA) shows
in patchwork.

Every check gives pass, warn, fail or skip with a one-line description in
the words patchwork shows. One module a concern:

  patchwork   the check names in patchwork's order, Result, PatchReport and
              the plain-text table
  findings    what a patch touches and adds, and the warnings tools print
  source      the checks that read the commit: checkpatch, kdoc,
              header_inline, source_inline, deprecated_api, module_param,
              verify_signedoff, verify_fixes, cc_maintainers, maintainers
  selftest    check_selftest: Makefile lists, config fragments, .gitignore
  linters     pylint, ruff, shellcheck, yamllint at the parent and the patch
  kbuild      the builds: the objects a patch touches compiled at its parent
              and at the patch, new warnings counted (build_32bit,
              build_clang, build_allmodconfig_warn, build_tools; the
              project's own W=1 build with sparse) and cocci
  xmit        the disassembly of the single-queue transmit function
              (xmit_disasm)
  per_series  cover_letter, fixes_present, patch_count, subject_prefix,
              tree_selection
"""
