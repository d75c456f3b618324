import 'package:flutter/material.dart' as m show Text;

class Tile extends StatelessWidget {
  const Tile({super.key, required this.label, this.size = 18.0});
  final String label;
  final double size;
  @override
  Widget build(BuildContext context) => Padding(
        padding: EdgeInsets.only(left: 8, top: 4),
        child: Text(label, style: TextStyle(fontSize: size * 2 - 1)),
      );
}

class Page extends StatelessWidget {
  const Page({super.key, required this.data});
  final OfferData data;
  String get heading => data['title'] ?? 'Offer';
  Widget _row(int i) => Row(children: <Widget>[Tile(label: '#$i ${data.items[i].name}'), Spacer()]);
  @override
  Widget build(BuildContext context) {
    final bool wide = data['columns'] != null && !(data['columns'] as num < 2);
    return Stack(alignment: Alignment.center, children: [
      Positioned(top: 0, left: 0, right: 0, child: Text(r'$raw', textAlign: TextAlign.center)),
      Column(children: [_row(0), wide ? _row(1) : const SizedBox.shrink(), Text("""multi
line""")]),
    ]);
  }
}
