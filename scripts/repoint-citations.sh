#!/usr/bin/env bash
# repoint-citations.sh — replace the citations of the out-of-tree ../shared/THEORY.md and of the
# source papers by their file names ("seed 003") with citations a user can follow:
# docs/theory.md §N and the papers' short names (listed in docs/theory.md, Appendix A) (issue 22).
#
#   THEORY 3, THEORY.md 3, THEORY.md section 3    -> docs/theory.md §3
#   THEORY.md sections 6 and 7 / 6, 7, 8          -> docs/theory.md §6 and §7 / §6, §7, §8
#   THEORY.md 6-8, THEORY 1/6                     -> docs/theory.md §6 to §8, docs/theory.md §1, §6
#   THEORY.md, preamble                           -> docs/theory.md, introduction
#   seed 000 / 001 / 002 / 003 / 004              -> Mondelli's notes / Ye et al. /
#                                                    the single-index notes / Bombari-Mondelli /
#                                                    the NC paper
#   seed 001 Table 1, seed 003 Fig. 2, ...        -> Ye et al., Table 1; Bombari-Mondelli, Fig. 2
#   the seed's c = 2, the seed writes, as in the seed -> the paper's c = 2, ... (a fixed list of
#                                                    phrases, so that a random seed is never hit)
#
# Line widths. A changed line that has become longer than before and than its limit is wrapped:
#   - comment lines ( * , /* , ; , # , // ) at 100 characters: the words that do not fit move to
#     the next line of the same comment when that line continues the sentence, else to a new
#     comment line with the same prefix;
#   - help-text lines of src/cli/*.c ("...\n" string literals) at the width of the help
#     paragraphs (92 characters as printed), the same way, as new string literals;
#   - the one-line summaries of `hdpsgd --help`, by the whole-line rewrites below.
# Other lines (printf formats, Markdown, data files such as models/*.tab) may grow.
#
# Usage: scripts/repoint-citations.sh [FILE...]   (default: every tracked text file)
# Idempotent: the output matches none of the patterns and nothing is wrapped unless a
# citation was replaced on that line, so a second run changes nothing; it can be re-run on a
# tree that has gained new citations. It never edits docs/theory.md (the target of the
# citations) or itself. JSON keys such as epsilon_seed003 are names, not citations: left alone.
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"

if [ $# -gt 0 ]; then
  files=("$@")
else
  mapfile -t files < <(git ls-files)
fi

todo=()
for f in "${files[@]}"; do
  f=${f#./}
  case "$f" in docs/theory.md|scripts/repoint-citations.sh) continue ;; esac
  [ -f "$f" ] || continue
  grep -Iq . "$f" 2>/dev/null || continue                      # text files only
  grep -q -e 'THEORY' -e 'shared/' -e '[Ss]eeds\?[ -]00[0-4]' -e '[Tt]he seed' -e 'seed: 2 B T' -e "seed's" "$f" || continue
  todo+=("$f")
done
[ ${#todo[@]} -gt 0 ] || exit 0

prog=$(cat <<'PERL'
use strict; use warnings;
my %name = ("000" => "Mondelli's notes", "001" => "Ye et al.", "002" => "the single-index notes",
            "003" => "Bombari-Mondelli", "004" => "the NC paper");
my $after = qr/(?:Table|eq\.|eqs\.|Fig\.|Figs\.|Lemma|Appendix|A\.\d|E:|Algorithm|Corollar|Theorem|Definition|[Ss]ections?\b|Assumption|Prop)/;

sub secs {                       # "6, 7 and 8" -> "§6, §7 and §8"; "6-8" -> "§6 to §8"; "1/6" -> "§1, §6"
  my $l = shift;
  $l =~ s{(\d+)\s*-\s*(\d+)}{\x{a7}$1 to \x{a7}$2}g;
  $l =~ s{(\d+)/(\d+)}{\x{a7}$1, \x{a7}$2}g;
  $l =~ s{(?<![\x{a7}\d])(\d+)}{\x{a7}$1}g;
  return $l;
}
sub paper { my ($s, $n) = @_; my $t = $name{$n}; return $s eq 'S' ? ucfirst $t : $t; }

sub repoint {
  local $_ = shift;
  # whole-line rewrites: the one-line summaries of `hdpsgd --help`
  s{"private feature learning for a single-index model, two stages \(seed 002\)"}
   {"two-stage private learning of a single-index model (the single-index notes)"};
  s{"NoisyGD on neural-collapse features: error against the dimension p \(seed 004\)"}
   {"NoisyGD on neural-collapse features: error vs the dimension p (the NC paper)"};
  # hdpsgd/kl.h: the old page gave NTK's last layer 2/m_L; docs/theory.md §8.1 has Table 1's 1/o
  s{\(THEORY 8 says 2/m_l for every l; Table 1's$}{(as in Table 1, whose closed form};
  s{^(\s*\*\s+)closed form of B needs beta_L = 1/o, so this toolkit follows Table 1\)}
   {${1}of B needs beta_L = 1/o; docs/theory.md \x{a7}8.1)};
  # the out-of-tree paths
  s{\[`\.\./shared/THEORY\.md`\]\(\.\./shared/THEORY\.md\) \(sections cited in the code\);}
   {[`docs/theory.md`](docs/theory.md) (cited in the code as `docs/theory.md \x{a7}N`);};
  s{the source papers are in `\.\./shared/seeds/`\.}
   {the source papers are listed in its [Appendix A](docs/theory.md#a-the-source-papers).};
  s{(?:\.\./)?shared/THEORY\.md}{docs/theory.md}g;
  s{-o /shared/grid}{-o /nfs/grid}g;                       # an example NFS path, not a citation
  # THEORY
  s{10 % \(THEORY\.md, preamble\)}{20 % (docs/theory.md \x{a7}3.7)}g;     # models/small-d.ini, measured
  s{THEORY\.md, preamble}{docs/theory.md, introduction}g;
  s{THEORY(?:\.md)?(?: sections?)? (\d+(?:(?:, | and |\s*-\s*|/)\d+)*)}{"docs/theory.md " . secs($1)}ge;
  s{THEORY\.md}{docs/theory.md}g;
  # the papers
  s{\b([Ss])eeds 000(?:, |/| and )003}{paper($1, "000") . " and Bombari-Mondelli"}ge;
  s{\bseed 002 formula}{the single-index notes' formula}g;
  s{\b([Ss])eed (00[0-4]) (?=$after)}{paper($1, $2) . ", "}ge;
  s{\b([Ss])eed (00[0-4])}{paper($1, $2)}ge;
  s{\b([Ss])eed-(00[0-4])\b}{paper($1, $2)}ge;
  # "the seed" meaning the paper at hand (never the random seed: only these phrases)
  s{\b([Tt])he seed(?='s (?:c |constant|Figs?\.|1/|slips|three|2BT|T\*|step\b|Theorem)| writes\b| used\b)}{$1he paper}g;
  s{\bas in the seed(?=[).:])}{as in the paper}g;
  s{^(\s*(?:\*\s+)?)seed's(?= 1/\(| constant c| T\* =|\. \*/)}{${1}paper's};         # "the" ends the line before
  s{\bcorrects the seed's$}{corrects the paper's};
  s{\(seed: 2 B T / }{(paper: 2 B T / }g;
  s{\bfor the seed's\)}{for the paper's)}g;
  s{noise multiplier of the seed\.}{noise multiplier of the paper.}g;
  s{(Mondelli's notes|[Tt]he single-index notes)'s\b}{$1'}g;     # possessive of "notes"
  s{\b(Ye et al\.|[Tt]he single-index notes) (writes|updates|says|uses)\b}{"$1 " . substr($2, 0, -1)}ge;
  return $_;
}

# split text at the last space that leaves at most $w characters; ("", text) if none
sub cut {
  my ($t, $w) = @_;
  return ($t, "") if length($t) <= $w;
  my $i = rindex($t, " ", $w);
  $i = rindex($t, " ", $i - 1) while $i > 0 && substr($t, $i + 1, 1) eq "\x{a7}";   # keep "docs/theory.md §N" whole
  return ("", $t) if $i <= 0;
  return (substr($t, 0, $i), substr($t, $i + 1));
}

my $help = ($ARGV[0] // '') =~ m{(^|/)src/cli/[^/]+\.c$};
my $markdown = ($ARGV[0] // '') !~ m{(\.[ch]|\.sh|\.gp|\.ini|\.py|CMakeLists\.txt)$};   # no wrapping there
my @in = split /^/m, do { local $/; <STDIN> };
# a citation split across two lines ("... seed" / "003's ..."): move the word to the next line
for (my $i = 0; $i + 1 < @in; $i++) {
  next unless $in[$i] =~ /\b[Ss]eed(?:\\n")?\s*\n\z/ && $in[$i + 1] =~ /^(\s*(?:\*\s+|;\s+|#\s+|"))00[0-4]\b/;
  my $pre = $1;
  $in[$i] =~ s/\s*\b([Ss])eed((?:\\n")?\s*\n)\z/$2/;
  my $s = $1;
  substr($in[$i + 1], length($pre), 0) = "${s}eed ";
}

my @out;
my ($carry, $cpre, $ckind, $cind) = ("", "", "", "");
for (my $i = 0; $i < @in; $i++) {
  my $orig = $in[$i];
  my $line = repoint($orig);
  chomp(my $o = $orig); chomp(my $l = $line);
  my $nl = $line =~ /\n\z/ ? "\n" : "";
  # a carried tail goes first
  if ($carry ne "") {
    my $joins = $carry !~ /\.\z/;                          # the sentence goes on
    if ($joins && $ckind eq 'c' && $l =~ /^(\Q$cpre\E)([^\s*-].*)$/ && $2 !~ /^[A-Z][\w-]*(?: \w+)?:/) {
      $l = $1 . $carry . " " . $2;                         # continue the sentence
    } elsif ($joins && $ckind eq 'h' && $l =~ /^(\s*"\Q$cind\E)(\S.*)(\\n"\s*|",\s*)$/ && $2 !~ /^[A-Z][\w-]*(?: \w+)?:/) {
      $l = $1 . $carry . " " . $2 . $3;
    } else {
      push @out, ($ckind eq 'h' ? "$cpre\"$cind$carry\\n\"\n" : "$cpre$carry\n");
    }
    $carry = "";
  }
  my $changed = ($l ne $o);
  my $owidth = $o =~ /^\s*"(.*)\\n"\s*$/ ? length($1) : length($o);
  if ($changed && $help && $l =~ /^(\s*)"(.*)\\n"\s*$/ && length($2) > 92 && length($2) > $owidth) {
    my ($pre, $text) = ($1, $2);
    my ($ind) = $text =~ /^( *)/;
    my ($head, $tail) = cut($text, 92);
    if ($head ne "" && $head =~ /\S/) { $l = "$pre\"$head\\n\""; ($carry, $cpre, $ckind, $cind) = ($tail, $pre, 'h', $ind); }
  } elsif ($changed && !$markdown && length($l) > 100 && length($l) > length($o)) {
    if ($l =~ /^(\s*(?:\*|\/\/|;|#)\s+)(.*)$/ && $l !~ /^\s*#\s*(?:include|define|if|endif)/) {
      my ($pre, $text) = ($1, $2);
      my $end = $text =~ s/\s*\*\/\s*$// ? " */" : "";
      my ($head, $tail) = cut($text, 100 - length($pre));
      ($head, $tail) = cut($head, length($head) - 1) if $tail eq "" && $end;
      if ($head ne "") {
        $l = $pre . $head;
        if ($end) { push @out, "$l\n"; $l = $pre . $tail . $end; $line = "$l$nl"; push @out, $line; next; }
        ($carry, $cpre, $ckind) = ($tail, $pre, 'c');
      }
    } elsif ($l =~ /^(\s*)\/\*\s(.*)$/) {                  # "/* ..." opening a comment
      my ($ind, $text) = ($1, $2);
      my $end = $text =~ s/\s*\*\/\s*$// ? " */" : "";
      my ($head, $tail) = cut($text, 100 - length($ind) - 3);
      ($head, $tail) = cut($head, length($head) - 1) if $tail eq "" && $end;
      if ($head ne "") {
        $l = "$ind/* $head";
        if ($end) { push @out, "$l\n"; push @out, "$ind * $tail$end$nl"; next; }
        ($carry, $cpre, $ckind) = ($tail, "$ind * ", 'c');
      }
    }
  }
  push @out, "$l$nl";
}
push @out, ($ckind eq 'h' ? "$cpre\"$cind$carry\\n\"\n" : "$cpre$carry\n") if $carry ne "";
print @out;
PERL
)

for f in "${todo[@]}"; do
  tmp=$(mktemp "$f.XXXXXX")
  perl -CSD -e "$prog" "$f" <"$f" >"$tmp"
  if cmp -s "$f" "$tmp"; then rm -f "$tmp"; else chmod --reference="$f" "$tmp"; mv "$tmp" "$f"; fi
done
